# Guest tests: kselftest programs run inside utils/torus-vm with torus.ko loaded.
.PHONY: check-vm
check-vm:
