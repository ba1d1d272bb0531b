# The kernel's own linter over the driver and its ABI header: kmod/ and
# include/uapi/ pass scripts/checkpatch.pl --no-tree --file with no error and
# no warning. checkpatch.pl and the two data files it reads come from
# Debian's linux-source package at build time (never committed), extracted
# once into build/checkpatch/ (about 20-30 s, the whole archive is read).
# Editors format new code the same way with the top-level .clang-format.
LINT_TAR ?= $(lastword $(sort $(wildcard /usr/src/linux-source-*.tar.xz)))
CHECKPATCH_DIR := $(O)/checkpatch
CHECKPATCH_FILES := $(addprefix $(CHECKPATCH_DIR)/,checkpatch.pl spelling.txt const_structs.checkpatch)
LINT_SRCS = $(sort $(wildcard kmod/*.c kmod/*.h include/uapi/*.h))

.PHONY: check-lint checkpatch-script
checkpatch-script: $(CHECKPATCH_FILES)
$(CHECKPATCH_FILES):
	@if [ -z "$(LINT_TAR)" ]; then echo "note: no /usr/src/linux-source-*.tar.xz (install linux-source-6.1): checkpatch not extracted"; exit 0; fi; \
	 mkdir -p $(CHECKPATCH_DIR) && top=$$(basename $(LINT_TAR) .tar.xz) && \
	 echo "extracting scripts/checkpatch.pl from $(LINT_TAR)" && \
	 tar -xJf $(LINT_TAR) -C $(CHECKPATCH_DIR) --strip-components=2 \
		$$top/scripts/checkpatch.pl $$top/scripts/spelling.txt $$top/scripts/const_structs.checkpatch && \
	 touch $(CHECKPATCH_FILES)

check-lint: $(CHECKPATCH_FILES)
	@tests/run-suite $(O)/results/lint tests/lint/checkpatch
