# Reliability lane (issue 7): fuzzer, stress tests, debug-kernel lane (check-debug).
.PHONY: check-debug
