package redact

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maskOf is what a secret becomes: its first keep bytes, then one mask byte
// per byte.
func maskOf(secret string, keep int) string {
	return secret[:keep] + strings.Repeat("*", len(secret)-keep)
}

func TestSecrets(t *testing.T) {
	const (
		hf        = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
		openai    = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34"
		anthropic = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-yz01"
		ghp       = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
		ghpat     = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
		akia      = "AKIAIOSFODNN7EXAMPLE"
		awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	)
	tests := []struct {
		name, in string
		secret   string // the part that must be masked
		keep     int    // bytes of it left readable
		kind     string // the kind counted, once
	}{
		{"hf token in env", "HF_TOKEN=" + hf, hf, 3, "hf-token"},
		{"openai key exported", `export OPENAI_API_KEY="` + openai + `"`, openai, 3, "openai-key"},
		{"anthropic key", "ANTHROPIC_API_KEY=" + anthropic, anthropic, 7, "anthropic-key"},
		{"github token in env", "GITHUB_TOKEN=" + ghp, ghp, 4, "github-token"},
		{"github pat in prose", "cloned with " + ghpat + " ok", ghpat, 11, "github-token"},
		{"aws key id by shape", "AWS_ACCESS_KEY_ID=" + akia, akia, 4, "aws-access-key"},
		{"aws secret variable", "AWS_SECRET_ACCESS_KEY=" + awsSecret, awsSecret, 0, "credential"},
		{"aws credentials file", "aws_secret_access_key = " + awsSecret, awsSecret, 0, "credential"},
		{"bearer header", `curl -H "Authorization: Bearer abcdef123456" http://127.0.0.1:30000/health`, "abcdef123456", 0, "header"},
		{"bearer alone", `headers = {"X": "Bearer abcdef123456"}`, "abcdef123456", 0, "header"},
		{"api-key flag", "python3 -m sglang.launch_server --model-path /m --api-key mysecretkey123 --port 30000", "mysecretkey123", 0, "credential"},
		{"api-key flag with =", "vllm serve /m --api-key=tok-12345", "tok-12345", 0, "credential"},
		{"hf token flag holding a token", "huggingface-cli login --token " + hf, hf, 3, "hf-token"},
		{"server args repr", "server_args=ServerArgs(model_path='/models/x', api_key='local-secret-value', port=30000)", "local-secret-value", 0, "credential"},
		{"vllm non-default args", "non-default args: {'model': '/m', 'api_key': ['token-abc123']}", "token-abc123", 0, "credential"},
		{"json setting", `{"api_key": "abc123def", "port": 8000}`, "abc123def", 0, "credential"},
		{"escaped json in a probe body", `{"body":"{\"api_key\": \"abc123def\"}"}`, "abc123def", 0, "credential"},
		{"password variable", "MYSQL_ROOT_PASSWORD=hunter2", "hunter2", 0, "credential"},
		{"url password", "DATABASE=postgres://admin:s3cr3t@db:5432/x", "s3cr3t", 0, "url-userinfo"},
		{"wandb key", "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567", 0, "credential"},
		{"one-line private key", `"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----\n"`, `\nMIIEv\n`, 0, "key-block"},
		{"slack token", "SLACK=xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF", 5, "slack-token"},
		{"x-api-key header", "X-Api-Key: k3y-abcdef", "k3y-abcdef", 0, "header"},
		{"jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", 3, "jwt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, tc.in, tc.secret)
			want := strings.Replace(tc.in, tc.secret, maskOf(tc.secret, tc.keep), 1)
			r := New(Options{})
			c := Counts{}
			got := r.String(tc.in, c)
			assert.Equal(t, want, got)
			assert.Equal(t, Counts{tc.kind: 1}, c)
			assert.Contains(t, Kinds(), tc.kind)
		})
	}
}

func TestNotSecrets(t *testing.T) {
	lines := []string{
		"[2026-11-30 04:24:37 TP0] Prefill batch. #new-seq: 1, #new-token: 7823, #cached-token: 0, token usage: 0.01",
		"max_total_num_tokens=123456, chunked_prefill_size=8192, max_prefill_tokens=16384",
		"python3 -m sglang.launch_server --tokenizer-path /m --api-key --port 8000",
		"server_args=ServerArgs(api_key=None, hf_token=None, password='')",
		"INFO 11-30 04:24:37 [api_server.py:1090] api_key: None",
		"the bearer of bad news",
		"export HF_TOKEN=$HF_TOKEN",
		"--api-key <your-key>",
		"NCCL_SOCKET_IFNAME=eth0 CUDA_VISIBLE_DEVICES=0,1 VLLM_ATTENTION_BACKEND=FLASHINFER",
		"Loading safetensors checkpoint shards: 100% Completed | 64/64 [05:12<00:00,  4.88s/it]",
		"https://huggingface.co/moonshotai/Kimi-K2.5/resolve/main/config.json",
		"task-abcdefghijklmnopqrstuvwxyz0123",
	}
	for _, l := range lines {
		r := New(Options{})
		c := Counts{}
		assert.Equal(t, l, r.String(l, c), l)
		assert.Zero(t, c.Total(), l)
	}
}

func TestPrivateKeyBlock(t *testing.T) {
	in := "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n  QyNTUxOQAAACB\n-----END OPENSSH PRIVATE KEY-----\nafter HF_TOKEN=abc\n"
	want := "before\n-----BEGIN OPENSSH PRIVATE KEY-----\n************************\n  *************\n-----END OPENSSH PRIVATE KEY-----\nafter HF_TOKEN=***\n"
	r := New(Options{})
	s := r.NewStream()
	out, err := io.ReadAll(NewReader(strings.NewReader(in), s))
	require.NoError(t, err)
	assert.Equal(t, want, string(out))
	assert.Equal(t, Counts{"key-block": 1, "credential": 1}, s.Counts())
}

func TestReaderKeepsBytes(t *testing.T) {
	// A line longer than the reader's buffer is redacted in pieces; nothing
	// is lost or added.
	long := strings.Repeat("x", MaxLine+100) + " HF_TOKEN=abc\nnext line\n"
	out, err := io.ReadAll(NewReader(strings.NewReader(long), New(Options{}).NewStream()))
	require.NoError(t, err)
	assert.Len(t, out, len(long))
	assert.True(t, bytes.HasSuffix(out, []byte(" HF_TOKEN=***\nnext line\n")))
}

func TestHosts(t *testing.T) {
	files := []string{
		"USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n" +
			"root           1  0.0  0.0 167744 13056 ?        Ss   04:24   0:01 /sbin/init\n" +
			"alice      41170 98.9 12.1 999999 99999 pts/0    Rl   04:25  80:01 python3 -m sglang.launch_server --host 0.0.0.0\n",
		"gpu17:41170:41300 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n" +
			"gpu17:41170:41300 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0> [1]eth1:192.168.100.27<0>\n",
		"HOME=/home/alice\nHOSTNAME=gpu17.corp.example.com\nMASTER_ADDR=10.1.2.4\n",
		"cuDNN version: 9.1.0.70\n[pip3] nvidia-cudnn-cu12==9.1.0.70\nprobe http://127.0.0.1:30000/health\n",
	}
	r := New(Options{Hosts: true, Hostnames: []string{"gpu17"}})
	for _, f := range files {
		require.NoError(t, r.Learn(strings.NewReader(f)))
	}
	var outs []string
	total := Counts{}
	for _, f := range files {
		s := r.NewStream()
		out, err := io.ReadAll(NewReader(strings.NewReader(f), s))
		require.NoError(t, err)
		require.Len(t, out, len(f))
		assert.Equal(t, strings.Count(f, "\n"), bytes.Count(out, []byte("\n")))
		outs = append(outs, string(out))
		total.Add(s.Counts())
	}
	all := strings.Join(outs, "")
	for _, leaked := range []string{"alice", "gpu17", "corp.example.com", "10.1.2.3", "192.168.100.27", "10.1.2.4"} {
		assert.NotContains(t, all, leaked)
	}
	// Loopback, unspecified addresses, versions and system users stay.
	for _, kept := range []string{"127.0.0.1", "0.0.0.0", "9.1.0.70", "root ", "sglang.launch_server"} {
		assert.Contains(t, all, kept)
	}
	// The same value gets the same pseudonym everywhere: gpu17 and
	// alice are learned as the first host and user of their length.
	assert.Contains(t, outs[1], "host1:41170:41300 [0] NCCL")
	assert.Equal(t, 2, strings.Count(outs[1], "host1:41170"))
	assert.Contains(t, outs[0], "user1      41170 98.9")
	assert.Contains(t, outs[2], "HOME=/home/user1\n")
	// 10.1.2.3 appears three times and is one pseudonym.
	first := strings.Index(outs[1], "eth0:") + len("eth0:")
	ip := outs[1][first : first+len("10.1.2.3")]
	assert.Equal(t, 2, strings.Count(outs[1], "eth0:"+ip+"<0>"))
	assert.Equal(t, Counts{"hostname": 3, "user": 2, "ipv4": 4}, total)
}

func TestFitIPs(t *testing.T) {
	for length := 7; length <= 15; length++ {
		seen := map[string]bool{}
		for n := 1; n <= 50; n++ {
			s, ok := fitIPv4(n, length)
			require.True(t, ok, "length %d n %d", length, n)
			assert.Len(t, s, length)
			assert.False(t, seen[s], "duplicate %s", s)
			seen[s] = true
		}
	}
	s, ok := fitIPv4(1, 8)
	require.True(t, ok)
	assert.Equal(t, "10.0.0.1", s)
	for length := 7; length <= 30; length++ {
		s, ok := fitIPv6(5, length)
		require.True(t, ok, "length %d", length)
		assert.Len(t, s, length)
	}
}

func TestHostsInDF(t *testing.T) {
	df := "Filesystem                Type  1K-blocks     Used Available Use% Mounted on\n" +
		"nfs-models:/export/models nfs4  104857600 52428800  52428800  50% /models\n"
	r := New(Options{Hosts: true})
	require.NoError(t, r.Learn(strings.NewReader(df)))
	out := r.String(strings.Split(df, "\n")[1], nil)
	assert.Equal(t, "host000001:/export/models nfs4  104857600 52428800  52428800  50% /models", out)
}
