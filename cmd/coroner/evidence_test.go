package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNoEvidenceExits3: input that holds no evidence of a run (a binary, an
// empty folder, a folder of configuration files, empty stdin) is no
// success: exit 3, with a line saying what was found and what coroner reads
// (issue 18, item 4).
func TestNoEvidenceExits3(t *testing.T) {
	empty := t.TempDir()
	etc := t.TempDir()
	for name, body := range map[string]string{
		"slurm.conf":       "ClusterName=c1\nSlurmctldHost=h1\nMpiDefault=none\nProctrackType=proctrack/cgroup\n",
		"freeipmi.conf":    "# freeipmi\n# driver-type LAN_2_0\n",
		"os-release":       "PRETTY_NAME=\"Debian GNU/Linux 12\"\nNAME=\"Debian\"\nVERSION_ID=\"12\"\nID=debian\n",
		"hosts":            "127.0.0.1 localhost\n",
		"journald.conf":    "[Journal]\n#Storage=auto\n",
		"ssl/certs/ca.pem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
	} {
		p := filepath.Join(etc, name)
		assert.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	bin, err := os.Executable() // a binary, like /bin/ls
	assert.NoError(t, err)
	for _, tc := range []struct {
		name, stdin, found string
		args               []string
	}{
		{"binary", "", "1 binary", []string{"analyze", bin}},
		{"empty folder", "", "holds no files", []string{"analyze", empty}},
		{"config folder", "", "held nothing coroner uses", []string{"analyze", etc}},
		{"empty stdin", "", "1 file", []string{"analyze", "-"}},
		{"timeline", "", "holds no files", []string{"timeline", empty}},
		{"diff", "", "holds no files", []string{"diff", seedBundle, empty}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.stdin, tc.args...)
			assert.Equal(t, exitInput, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.found)
			assert.Contains(t, errs, "coroner reads server logs")
		})
	}
	// sources still lists what there is.
	code, out, _ := runCLI(t, "", "sources", etc)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "slurm.conf")
}
