module github.com/coroner-dev/coroner

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/expr-lang/expr v1.17.8
	github.com/goccy/go-yaml v1.19.2
	github.com/gomarkdown/markdown v0.0.0-20261107153045-a51d70be185e
	github.com/klauspost/compress v1.20.4
	github.com/stretchr/testify v1.12.1
	github.com/ulikunitz/xz v0.5.17
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
	golang.org/x/tools v0.52.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
