# docker.mk - `make docker-test`: build the Dockerfile with podman and run the image
#
#   make docker-test       # sh tests/docker/run.sh (not part of `make test`)
#
# No Docker engine needed: podman builds with --isolation=chroot and runs with runc; when
# no registry is reachable the debian:bookworm-slim base is made with debootstrap.
.PHONY: docker-test

docker-test:
	sh tests/docker/run.sh
