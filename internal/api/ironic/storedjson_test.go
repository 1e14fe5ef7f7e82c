package ironic

import (
	"bytes"
	"encoding/json"
	"testing"
)

// storedMasks are the maskers the node view writes stored objects with.
var storedMasks = map[string]masker{
	"none": nil, "driver_info": maskDriverInfo, "driver_internal_info": maskAgentToken, "instance_info": maskInstanceInfo,
}

// checkStored fails t unless appendStored writes text as appendMap writes
// it decoded (by encoding/json, as the store's fallback decodes), with
// every masker. Texts that are no JSON object are skipped: the store
// keeps only those.
func checkStored(t *testing.T, text string) {
	t.Helper()
	if !json.Valid([]byte(text)) {
		return
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return
	}
	for name, mask := range storedMasks {
		want := appendMap([]byte("x"), m, mask)
		got := appendStored([]byte("x"), []byte(text), mask)
		if !bytes.Equal(got, want) {
			t.Errorf("%s with the %s mask:\nstored  %s\ndecoded %s", text, name, got, want)
		}
	}
}

func TestAppendStored_SameAsDecoded(t *testing.T) {
	for _, text := range []string{
		`{}`,
		` { } `,
		`{"a":1,"b":[1,2.50,-0,1e5,1E-7,true,false,null],"c":{"d":{}},"e":[]}`,
		`{"ipmi_address":"10.0.0.1","ipmi_password":"secret","ipmi_username":"admin","ipmi_port":623}`,
		`{"deploy_kernel":"http://x/k","kernel_append_params":"console=ttyS0 password=hunter2 --token abc"}`,
		`{"password":{"nested":"x","token":"t"},"secret":[1,"two"],"token":null,"pass":{},"snmp_community":"c"}`,
		`{"agent_secret_token":"t","agent_secret_token_pregenerated":true,"clean_steps":[{"step":"x"}]}`,
		`{"configdrive":"H4sI","image_url":"http://x","image_source":"http://y","image_checksum":"sha256:0"}`,
		`{"list":[{"password":"p","ok":"<password>p</password>"},"a=b","x:y"]}`,
		// Keys out of order or twice, escaped keys: written from the decoded object.
		`{"b":1,"a":2}`,
		`{"a":1,"a":2}`,
		`{"a\u0062":1,"ab":2}`,
		`{"é":1,"a":{"z":1,"y":2}}`,
		// Strings with escapes or beyond printable ASCII.
		`{"note":"<a> & \"quoted\"","tab":"a\tb\nc\rd\be\ff\\g\/h"}`,
		`{"u":"caf\u00e9 \ud83d\ude00 \ud800 \udc00x \ud800\u0041 \u2028\u2029 ü €","raw":"tab` + "\u2028" + `"}`,
		`{"ctl":"\u0000\u001f\u007f","del":"` + "\x7f" + `","bad":"` + "\xff\xfe" + `ok"}`,
		`{"password":"p\u0000w","s":"pass\u0077ord=x"}`,
		`{"deep":[[[{"a":[{"b":"c"}]}]]],"n":18446744073709551617}`,
		" {\"a\" : 1 ,\n\t\"b\" : [ 1 , 2 ] } ",
	} {
		checkStored(t, text)
	}
}

func FuzzAppendStored(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[1,"x",{"password":"p"}],"c":"\u00e9\n"}`,
		`{"ipmi_password":"x","z":{"token":[1]},"y":"--password x"}`,
		`{"b":1,"a":"\ud83d\ude00"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { checkStored(t, text) })
}

// What the store writes (encoding/json, HTML not escaped) is written
// directly, not decoded first.
func TestAppendStored_TakesStoreTextDirectly(t *testing.T) {
	m := map[string]any{"ipmi_password": "p", "z": []any{json.Number("1.50"), "<a> & \"q\" é\u2028"},
		"nested": map[string]any{"token": "t", "b": nil}, "deploy_kernel": "http://x/k"}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	text := bytes.TrimSpace(buf.Bytes())
	for name, mask := range storedMasks {
		w := storedWriter{text: text}
		got, ok := w.object(nil, mask)
		if !ok || !w.end() {
			t.Errorf("%s mask: %s was not written directly", name, text)
		}
		if want := appendMap(nil, m, mask); !bytes.Equal(got, want) {
			t.Errorf("%s mask:\nstored  %s\ndecoded %s", name, got, want)
		}
	}
}
