#!/usr/bin/env bash
# Build the OFFLINE test image for the Docker sandbox (no registry needed).
#
# The image holds only a skeleton root filesystem (/etc/passwd with the sandbox user,
# the loader cache, /bin -> usr/bin symlinks, /scratch); its label
# `reflexion_bench.bind_host_usr=true` tells DockerSandbox to bind-mount the host's /usr
# read-only into every container. So the container runs the host's Python 3 (and
# Debian's rustc/cargo when installed) with nothing copied: the build takes about a
# second. Users online build envs/python and envs/rust instead (official base images).
#
#   envs/test/build.sh [TAG]     default TAG: reflexion-bench/sandbox-test:offline
set -euo pipefail
TAG="${1:-reflexion-bench/sandbox-test:offline}"
SANDBOX_UID=10001
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$root"/{etc,tmp,scratch,proc,dev,sys,usr,home/sandbox}
for d in bin sbin lib lib32 lib64 libx32; do
  # Mirror the host's merged-/usr layout (Debian 12: /bin -> usr/bin, ...).
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$root/$d"; fi
done
cat >"$root/etc/passwd" <<PASSWD
root:x:0:0:root:/root:/usr/sbin/nologin
sandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:/home/sandbox:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat >"$root/etc/group" <<GROUP
root:x:0:
sandbox:x:${SANDBOX_UID}:
nogroup:x:65534:
GROUP
cp /etc/ld.so.cache "$root/etc/ld.so.cache"
[ -f /etc/ld.so.conf ] && cp /etc/ld.so.conf "$root/etc/ld.so.conf"
[ -d /etc/ld.so.conf.d ] && cp -r /etc/ld.so.conf.d "$root/etc/ld.so.conf.d"
[ -d /etc/alternatives ] && cp -a /etc/alternatives "$root/etc/alternatives"
chmod 1777 "$root/tmp"
chown "$SANDBOX_UID:$SANDBOX_UID" "$root/scratch" "$root/home/sandbox"
tar -C "$root" --numeric-owner -cf - . | docker import \
  --change "USER ${SANDBOX_UID}:${SANDBOX_UID}" \
  --change "WORKDIR /scratch" \
  --change "ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/sandbox LANG=C.UTF-8" \
  --change "LABEL reflexion_bench.bind_host_usr=true" \
  --change "LABEL reflexion_bench.python=/usr/bin/python3" \
  --change 'CMD ["sleep", "infinity"]' \
  - "$TAG" >/dev/null
echo "built $TAG"
