package inspect

import (
	"fmt"
	"strings"

	"github.com/ferrometal/ferro/internal/driver"
)

// ParseKernelParams splits a kernel parameter string the way a shell would
// (single and double quotes group, backslash escapes) into key=value
// parameters; a word without "=" becomes a bare flag. The boot interface
// validates the characters before anything reaches a boot script.
func ParseKernelParams(s string) (driver.RamdiskParams, error) {
	words, err := shellSplit(s)
	if err != nil {
		return nil, err
	}
	var out driver.RamdiskParams
	for _, w := range words {
		k, v, hasValue := strings.Cut(w, "=")
		if k == "" {
			return nil, fmt.Errorf("parameter %q has no name", w)
		}
		out = append(out, driver.RamdiskParam{Key: k, Value: v, Flag: !hasValue})
	}
	return out, nil
}

func shellSplit(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if escaped {
		return nil, fmt.Errorf("trailing backslash in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
