module github.com/fred-debugger/fred

go 1.24.0

require (
	github.com/checkpoint-restore/go-criu/v7 v7.2.0
	github.com/chzyer/readline v1.5.1
	github.com/creack/pty v1.1.24
	github.com/dlclark/regexp2 v1.12.0
	github.com/google/go-dap v0.12.0
	github.com/google/goexpect v0.0.0-20210430020637-ab937bf7fd6f
	github.com/klauspost/compress v1.18.2
	golang.org/x/sys v0.25.0
	google.golang.org/protobuf v1.34.2
)

require (
	github.com/golang/protobuf v1.5.0 // indirect
	github.com/google/goterm v0.0.0-20190703233501-fc88cf888a3f // indirect
	golang.org/x/crypto v0.0.0-20200728195943-123391ffb6de // indirect
	google.golang.org/genproto v0.0.0-20190819201941-24fa4b261c55 // indirect
	google.golang.org/grpc v1.31.0 // indirect
)
