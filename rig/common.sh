# Shared shell settings for the netswap rig. Sourced, not executed.
# shellcheck shell=bash

NETSWAP_ROOT=${NETSWAP_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
NETSWAP_CACHE=${NETSWAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/netswap}
NETSWAP_TARBALL=${NETSWAP_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
NETSWAP_JOBS=${NETSWAP_JOBS:-$(nproc)}
export NETSWAP_ROOT NETSWAP_CACHE NETSWAP_TARBALL NETSWAP_JOBS

export CCACHE_DIR=${CCACHE_DIR:-$NETSWAP_CACHE/ccache}
# Variant trees live under different paths; make ccache hash paths relative.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$NETSWAP_CACHE}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# The kernel embeds build paths; ccache may still share objects across variants.
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-time_macros,include_file_mtime,include_file_ctime,file_stat_matches}

log() { printf '[netswap %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'netswap: error: %s\n' "$*" >&2; exit 1; }
