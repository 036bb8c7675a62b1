package envinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSecretNamesAreWholeWords(t *testing.T) {
	for _, name := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "api_key", "--api-key", "AWS_SECRET_ACCESS_KEY",
		"DB_PASSWORD", "GITHUB_TOKEN", "APIKEY", "GOOGLE_APPLICATION_CREDENTIALS", "session_cookie"} {
		assert.True(t, IsSecretName(name), name)
	}
	for _, name := range []string{"max_total_tokens", "speculative_num_draft_tokens", "tokenizer_path", "TOKENIZERS_PARALLELISM",
		"--max-num-batched-tokens", "kv_cache_dtype", "NCCL_P2P_LEVEL", "keep_alive"} {
		assert.False(t, IsSecretName(name), name)
	}
}
