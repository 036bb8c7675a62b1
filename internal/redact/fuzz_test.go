package redact

import (
	"bytes"
	"io"
	"testing"
)

// FuzzRedactKeepsStructure checks the promise the analyzer relies on: for
// any input, in both modes, redaction changes no length and no line break,
// and a second pass finds nothing new to mask.
func FuzzRedactKeepsStructure(f *testing.F) {
	for _, s := range []string{
		"HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n",
		"python3 -m sglang.launch_server --api-key abc --port 1\n",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n",
		"gpu17:41170:41300 [0] NCCL INFO Using eth0:10.1.2.3<0> fe80::1ff:fe23:4567:890a\n",
		"USER PID\nalice 1 /home/alice/x\n",
		`{"api_key": "x\"y"}` + "\r\n",
		"password: |\n  a\n  b\nx: 1\n",
		"{\"api_keys\": [\n \"a\",\n]}\n",
		"export DB_PASSWORD=\"a\nb\" c\n",
		"serve --api-key \\\n  v \\\n",
		"- name: HF_TOKEN\n  value: x\n",
		"postgres://u:p/w@d@h:1/x?token=t&sig=s#f https://hooks.slack.com/services/T/B/X\n",
		"Cookie: a=1; b=2\r\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl\n",
		"mail a.b@example.org C:\\Users\\bob /data/users/eve head.cluster.internal\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, hosts bool) {
		r := New(Options{Hosts: hosts, Hostnames: []string{"gpu17"}})
		if err := r.Learn(bytes.NewReader(in)); err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(NewReader(bytes.NewReader(in), r.NewStream()))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(in) {
			t.Fatalf("length %d became %d", len(in), len(out))
		}
		for i := range in {
			if (in[i] == '\n') != (out[i] == '\n') {
				t.Fatalf("line break moved at byte %d", i)
			}
		}
		if hosts {
			return // pseudonyms are new words a second learner could pick up
		}
		s := New(Options{}).NewStream()
		again, _ := io.ReadAll(NewReader(bytes.NewReader(out), s))
		if !bytes.Equal(again, out) {
			t.Fatalf("a second pass changed the output:\n%q\n%q", out, again)
		}
	})
}
