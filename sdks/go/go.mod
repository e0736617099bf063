module github.com/svc-oss/svc-go

go 1.19
