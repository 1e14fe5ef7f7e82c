package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// lookupError is a report that matches no introspection (or several), in
// ironic-inspector's words: a failure of the look-up, reported with the
// pre-processing failures, 400.
func lookupError(format string, a ...any) error {
	return errorf(http.StatusBadRequest, "The following failures happened during running pre-processing hooks:\nLook up error: "+format, a...)
}

// lookupAttributes writes the attributes a report was looked up by as
// upstream does (a Python dict).
func lookupAttributes(bmcs, macs []string) string {
	return fmt.Sprintf("{'bmc_address': %s, 'mac': %s}", pyList(bmcs), pyList(macs))
}

// pyList writes strings as Python's repr of a list of them.
func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// withoutLogs is the report to store as the unprocessed data: as
// ironic-inspector, without the ramdisk's logs (they are written to
// [processing]ramdisk_logs_dir, never kept in the data). A body without
// them is returned as posted.
func withoutLogs(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"logs"`)) {
		return body
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return body // cannot happen: the body was decoded already
	}
	if _, ok := members["logs"]; !ok {
		return body
	}
	delete(members, "logs")
	b, err := json.Marshal(members)
	if err != nil {
		return body
	}
	return b
}
