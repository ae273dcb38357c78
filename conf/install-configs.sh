#!/bin/sh
# meson install: puts the example configurations in DESTDIR/SYSCONFDIR/lattice unless a file of
# that name is there already. An operator's edited configuration is never overwritten (meson's
# own install always would); the pristine copies are in share/doc/lattice/examples to compare.
set -eu
dir="${DESTDIR:-}$1"
shift
mkdir -p "$dir"
for file in "$@"; do
  target="$dir/$(basename "$file")"
  if [ -e "$target" ]; then
    echo "keeping $target (an existing configuration)"
  else
    install -m 0644 "$file" "$target"
  fi
done
