# torus.ko, built out of tree against KDIR (see Kbuild for the object list).
.PHONY: modules clean-kmod
modules:
clean-kmod:
