module github.com/coroner-dev/coroner

go 1.26
