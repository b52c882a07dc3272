#!/bin/bash
# make check-build: the series builds without new warnings after each patch,
# with gcc W=1, with sparse (C=1) and with clang (LLVM=1, W=1), for x86_64,
# i386 (HIGHMEM) and arm64 (Debian's cross compilers), under allmodconfig.
#
#   scripts/check-build.sh [--patches DIR] [--arch A,B] [--cc gcc,clang]
#                          [--no-dirs] [--force] [--report FILE] [--no-deps]
#
#   --patches DIR  the series to check: DIR/series + DIR/NNNN-*.patch (patches/)
#   --arch, --cc   a subset of the build trees (x86_64,i386,arm64; gcc,clang);
#                  a gcc tree gives two configurations: gcc W=1 and sparse
#   --no-dirs      only the touched objects, not their directories at the end
#   --force        rebuild trees already checked for this series
#   --report FILE  the summary (docs/results/check-build.md)
#   --report-only  write the summary from the logs so far, build nothing
#
# Each build tree (arch x compiler) is configured with allmodconfig (plus
# CONFIG_WERROR=n so that W=1 warnings stay warnings, and CONFIG_KUNIT=y so
# that the series' built-in KUnit suites are configured), then `make prepare`.
# First pass, after each patch: step 0 builds, on the pristine tree, every
# object the series touches (each touched .c file's .o); step k applies patch
# k on top of 1..k-1 and builds the same objects (make rebuilds what changed:
# the objects patch k touches and those including a header it changes).
# Second pass, the directories: the directories of the touched .c files
# (kbuild's `make DIR/`, recursive; one with more than DIR_MAX .c files, such
# as drivers/net/, is left to its objects) on pristine and after the last
# patch. In a gcc tree each step then runs sparse on the objects that step
# compiled (`make C=2` on objects already up to date: sparse only, what C=1
# does while compiling).
#
# A warning is new when its message (file and line left out) was not printed
# for the same object on the pristine tree. Objects not recompiled at a step
# keep the warnings of their last compile. Exit 1 if any configuration has a
# new warning or fails to build after any patch.
#
# Source: a worktree of the rig's git tree ($NETSWAP_CACHE/linux), detached
# at tag `pristine`, in $NETSWAP_CACHE/check-build/src: the shared tree and
# its v/* branches are never touched. Build trees: $NETSWAP_CACHE/check-build/
# ARCH-CC; logs: $NETSWAP_CACHE/check-build/runs/STAMP/ (STAMP hashes the
# patches): a tree finished for this series is not rebuilt without --force,
# so the check can be done in parts (--arch, --cc) and the report covers every
# tree finished for the series.
# the whole script is one compound command: bash reads it before running it
{
set -euo pipefail
cd "$(dirname "$0")/.."
. rig/common.sh

PATCHES=patches
ARCHS=x86_64,i386,arm64
CCS=gcc,clang
DIRS=1
FORCE=0
DEPS=1
REPORT_ONLY=0
REPORT=docs/results/check-build.md
DIR_MAX=${DIR_MAX:-200}
JOBS=${CHECK_BUILD_JOBS:-2}
while [ $# -gt 0 ]; do
	case "$1" in
	--patches) PATCHES=${2:?}; shift ;;
	--arch) ARCHS=${2:?}; shift ;;
	--cc) CCS=${2:?}; shift ;;
	--no-dirs) DIRS=0 ;;
	--force) FORCE=1 ;;
	--report) REPORT=${2:?}; shift ;;
	--no-deps) DEPS=0 ;;
	--report-only) REPORT_ONLY=1; DEPS=0 ;;
	-h|--help) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "check-build: unknown argument '$1' (--help)" ;;
	esac
	shift
done
PATCHES=$(cd "$PATCHES" && pwd)
[ -f "$PATCHES/series" ] || die "check-build: no $PATCHES/series"

# --- packages: only what this target needs beyond make deps ------------------
CB_PKGS="sparse clang llvm lld gcc-i686-linux-gnu binutils-i686-linux-gnu
gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu"
install_deps() {
	local p missing="" sudo=""
	for p in $CB_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	log "check-build: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	# never let package scripts start daemons (as scripts/deps.sh)
	local policy=/usr/sbin/policy-rc.d created=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
		$sudo chmod +x "$policy"
		created=1
	fi
	local rc=0
	$sudo apt-get update -q || rc=$?
	# shellcheck disable=SC2086  # one package per word
	[ $rc -ne 0 ] || $sudo apt-get install -y -q --no-install-recommends $missing || rc=$?
	[ $created = 0 ] || $sudo rm -f "$policy"
	[ $rc -eq 0 ] || die "check-build: apt-get failed"
}
[ $DEPS = 0 ] || install_deps

# the layout of the logs below: a change of it starts the check anew
CB_FORMAT=2

# --- the series: patches, touched objects and directories --------------------
mapfile -t SERIES < <(sed -e 's/#.*//' -e 's/[[:space:]].*//' "$PATCHES/series" | grep .)
N=${#SERIES[@]}
[ "$N" -gt 0 ] || die "check-build: $PATCHES/series is empty"
for p in "${SERIES[@]}"; do [ -f "$PATCHES/$p" ] || die "check-build: missing $PATCHES/$p"; done
stamp=$(cd "$PATCHES" && { for p in "${SERIES[@]}"; do echo "$p"; sha256sum < "$p"; done; echo "$CB_FORMAT"; } | sha256sum | cut -c1-12)

CB=$NETSWAP_CACHE/check-build
SRC=$CB/src
RUN=$CB/runs/$stamp
# runs before 2026-12-07 kept the directory list in a file named "dirs",
# the name of the directory pass's logs: that pass could never run
[ ! -f "$RUN/dirs" ] || mv "$RUN/dirs" "$RUN/dirlist"
TREE=$NETSWAP_CACHE/linux
W() { git -C "$SRC" -c advice.detachedHead=false "$@"; }
wall=-1
if [ $REPORT_ONLY = 1 ]; then
	[ -f "$RUN/series" ] || die "check-build: nothing checked yet for this series ($RUN)"
else
mkdir -p "$RUN"

# the files each patch changes (new side), one line per patch
: > "$RUN/touched"
for p in "${SERIES[@]}"; do
	git apply --numstat "$PATCHES/$p" | cut -f3 | tr '\n' ' ' >> "$RUN/touched"
	echo >> "$RUN/touched"
done
mapfile -t TOUCHED < "$RUN/touched"
objs_of() { local f; for f in $1; do case "$f" in *.c) echo "${f%.c}.o" ;; esac; done; }
# directories: those of every touched .c file, unless too large to be cheap
DIRLIST=()
if [ $DIRS = 1 ]; then
	for d in $(for i in "${!TOUCHED[@]}"; do objs_of "${TOUCHED[$i]}"; done | xargs -rn1 dirname | sort -u); do
		DIRLIST+=("$d")
	done
fi

# --- the source worktree (detached; never the shared tree's branches) -------
[ -d "$TREE/.git" ] || die "check-build: no $TREE (run: make kernel once)"
if ! W rev-parse --git-dir >/dev/null 2>&1; then
	log "check-build: adding worktree $SRC (detached at pristine)"
	# -f: a worktree registered earlier whose folder is gone
	git -C "$TREE" worktree add -q -f --detach "$SRC" pristine
fi
reset_src() {
	W reset -q --hard pristine
	W clean -fdq
}
reset_src
# directories too large for a cheap build keep only their objects
big=()
if [ ${#DIRLIST[@]} -gt 0 ]; then
	keep=()
	for d in "${DIRLIST[@]}"; do
		# count on the tree after the series (new files included) - cheap
		# enough to count on pristine: new files are few
		if [ "$(find "$SRC/$d" -name '*.c' | wc -l)" -le "$DIR_MAX" ]; then keep+=("$d/"); else big+=("$d"); fi
	done
	DIRLIST=("${keep[@]}")
fi
printf '%s\n' "${DIRLIST[@]}" > "$RUN/dirlist"
printf '%s\n' "${big[@]}" > "$RUN/bigdirs"
printf '%s\n' "${SERIES[@]}" > "$RUN/series"
echo "$PATCHES" > "$RUN/patches-dir"

# --- one build tree ----------------------------------------------------------
cross_of() { case "$1" in i386) echo i686-linux-gnu- ;; arm64) echo aarch64-linux-gnu- ;; *) echo "" ;; esac; }
allconfig=$CB/allmod.config
printf '%s\n' '# CONFIG_WERROR is not set' 'CONFIG_KUNIT=y' > "$allconfig"

run_tree() { # ARCH CC MODE: MODE patches (step k = patches 1..k, their
	# objects) or dirs (step 0 = pristine, step N = the whole series; every
	# touched object and directory)
	local arch=$1 cc=$2 mode=$3 unit="$1-$2"
	local out=$CB/$unit logs=$RUN/$3/$unit
	if [ $FORCE = 0 ] && [ -f "$logs/done" ]; then
		log "check-build: $mode $unit already checked for this series ($(cat "$logs/done") s)"
		return 0
	fi
	rm -rf "$logs"; mkdir -p "$logs" "$out"
	local t0 cross mflags=()
	t0=$(date +%s)
	cross=$(cross_of "$arch")
	if [ "$cc" = clang ]; then
		mflags=(LLVM=1 CC="ccache clang")
	else
		mflags=(CROSS_COMPILE="$cross" CC="ccache ${cross}gcc")
	fi
	mk() { LC_ALL=C make -C "$SRC" O="$out" ARCH="$arch" "${mflags[@]}" W=1 -j"$JOBS" "$@"; }
	cfg() {
		KCONFIG_ALLCONFIG=$allconfig mk -s allmodconfig > "$logs/config.log" 2>&1 ||
			{ cat "$logs/config.log" >&2; return 1; }
	}
	reset_src
	log "check-build: $mode $unit: allmodconfig + prepare"
	cfg || { echo "config failed" > "$logs/failed"; return 1; }
	if [ "$arch" = i386 ]; then
		grep -E '^CONFIG_HIGHMEM(4G|64G)?=y' "$out/.config" | tr '\n' ' ' > "$logs/highmem"
		grep -q '^CONFIG_HIGHMEM=y' "$out/.config" || die "check-build: i386 allmodconfig without CONFIG_HIGHMEM"
	fi
	if ! mk prepare > "$logs/prepare.log" 2>&1; then
		tail -20 "$logs/prepare.log" >&2; echo "prepare failed" > "$logs/failed"; return 1
	fi
	echo $(( $(date +%s) - t0 )) > "$logs/prepare.time"
	local k i objs targets all_objs=() ts rc steps kconf
	mapfile -t all_objs < <(for i in "${!TOUCHED[@]}"; do objs_of "${TOUCHED[$i]}"; done)
	if [ "$mode" = dirs ]; then steps="0 $N"; else steps=$(seq 0 "$N"); fi
	local applied=0
	for k in $steps; do
		ts=$(date +%s)
		kconf=0
		while [ $applied -lt "$k" ]; do
			if ! W apply --index "$PATCHES/${SERIES[$applied]}" 2> "$logs/step-$k.apply"; then
				echo "patch $((applied + 1)) does not apply" > "$logs/failed"; return 1
			fi
			# a patch that adds Kconfig symbols: configure again
			if grep -qE '(^| )([^ ]*/)?Kconfig[^ ]*( |$)' <<< "${TOUCHED[$applied]}"; then kconf=1; fi
			applied=$((applied + 1))
		done
		if [ $kconf = 1 ]; then
			cfg || { echo "config failed after patch $k" > "$logs/failed"; return 1; }
		fi
		# every object the series touches whose source exists now (new
		# files appear with their patch): a header changed by patch k is
		# compiled at step k through every one of them
		mapfile -t targets < <(printf '%s\n' "${all_objs[@]}" | sort -u |
			while read -r o; do [ -n "$o" ] && [ -f "$SRC/${o%.o}.c" ] && echo "$o"; done)
		if [ "$mode" = dirs ]; then targets+=("${DIRLIST[@]}"); fi
		if [ "$k" = 0 ]; then
			# a clean baseline: every target compiles now, whatever an
			# earlier run left in the build tree
			for o in "${targets[@]}"; do
				case "$o" in */) find "$out/$o" -name '*.o' -delete 2>/dev/null || true ;;
				*) rm -f "$out/$o" ;; esac
			done
		fi
		printf '%s\n' "${targets[@]}" > "$logs/step-$k.targets"
		rc=0
		mk -k --output-sync=target "${targets[@]}" > "$logs/step-$k.log" 2>&1 || rc=$?
		echo "$rc" > "$logs/step-$k.rc"
		if [ "$cc" = gcc ]; then
			# sparse on what this step compiled (objects are up to date: C=2
			# runs only the checker)
			mapfile -t objs < <(sed -n 's/^  CC\( \[M\]\)\{0,1\} *\([^ ]*\.o\)$/\2/p' "$logs/step-$k.log" | sort -u)
			rc=0; local tsp; tsp=$(date +%s)
			if [ ${#objs[@]} -gt 0 ]; then
				mk -k --output-sync=target C=2 "${objs[@]}" > "$logs/step-$k.sparse.log" 2>&1 || rc=$?
			else
				: > "$logs/step-$k.sparse.log"
			fi
			echo "$rc" > "$logs/step-$k.sparse.rc"
			echo $(( $(date +%s) - tsp )) > "$logs/step-$k.sparse.time"
		fi
		echo $(( $(date +%s) - ts )) > "$logs/step-$k.time"
		log "check-build: $mode $unit: step $k/$N done in $(( $(date +%s) - ts ))s$( [ "$(cat "$logs/step-$k.rc")" = 0 ] || echo ' (BUILD FAILED)')"
	done
	# Kconfig state of every touched object after the series
	local o mf line syms s st
	for o in $(printf '%s\n' "${all_objs[@]}" | sort -u); do
		mf=$SRC/$(dirname "$o")/Makefile
		line=$(grep -E "(^|[[:space:]=])$(basename "$o")([[:space:]]|$)" "$mf" 2>/dev/null | head -1 || true)
		# part of a composite module (NAME-objs/NAME-y): that module's line
		if [[ $line =~ ^([A-Za-z0-9_]+)-(objs|y) ]]; then
			line=$(grep -E "(^|[[:space:]=])${BASH_REMATCH[1]}\.o([[:space:]]|$)" "$mf" | head -1 || true)
		fi
		syms=$(grep -oE 'CONFIG_[A-Z0-9_]+' <<< "$line" | sort -u || true)
		st=""
		for s in $syms; do
			st="$st $s=$(sed -n "s/^$s=//p" "$out/.config")"
			grep -q "^$s=" "$out/.config" || st="$st(not set)"
		done
		echo "$o${st:- (always built in its directory)}"
	done > "$logs/objects-config"
	echo $(( $(date +%s) - t0 )) > "$logs/done"
	log "check-build: $mode $unit done in $(cat "$logs/done")s"
}

t_start=$(date +%s)
IFS=, read -ra arch_list <<< "$ARCHS"
IFS=, read -ra cc_list <<< "$CCS"
modes=(patches)
[ $DIRS = 0 ] || [ ${#DIRLIST[@]} -eq 0 ] || modes+=(dirs)
# every tree after each patch first, the directories (the costly part) last
for m in "${modes[@]}"; do
	for a in "${arch_list[@]}"; do
		case "$a" in x86_64|i386|arm64) ;; *) die "check-build: unknown arch $a" ;; esac
		for c in "${cc_list[@]}"; do
			case "$c" in gcc|clang) ;; *) die "check-build: unknown compiler $c" ;; esac
			run_tree "$a" "$c" "$m" || log "check-build: $m $a-$c: $(cat "$RUN/$m/$a-$c/failed" 2>/dev/null || echo failed)"
		done
	done
done
reset_src
wall=$(( $(date +%s) - t_start ))
fi

# --- the report ----------------------------------------------------------------
mkdir -p "$(dirname "$REPORT")"
rc=0
python3 - "$RUN" "$REPORT" "$wall" "$N" "$PATCHES" <<'PY' || rc=$?
import datetime, json, os, re, sys

run, report, wall, n, patches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
series = open(os.path.join(run, "series")).read().split()
dirs = open(os.path.join(run, "dirlist")).read().split()
bigdirs = open(os.path.join(run, "bigdirs")).read().split()
touched = [line.split() for line in open(os.path.join(run, "touched"))]

ansi = re.compile(r"\x1b\[[0-9;]*[mK]")
quiet = re.compile(r"^  ([A-Z][A-Z0-9_]*)( \[M\])? +(\S+)$")
diag = re.compile(r"^(\S+?):(\d+:)?(\d+:)? (warning|error): (.*)$")
cont = re.compile(r"^(\S+?):(\d+:)?(\d+:)?    (.*)$")          # sparse's "expected/got" lines
other = re.compile(r"^(\S+): (warning|error): (.*)$")           # objtool, modpost-like


def parse(path):
    """{object: [(message, first location)]} for every object compiled in the log"""
    res, cur, last = {}, "(prepare)", None
    if not os.path.exists(path):
        return res
    for raw in open(path, errors="replace"):
        line = ansi.sub("", raw.rstrip("\n"))
        m = quiet.match(line)
        if m:
            tgt = re.sub(r"^.*/check-build/src/", "", m.group(3))
            if m.group(1) == "CHECK" and tgt.endswith(".c"):
                tgt = tgt[:-2] + ".o"
            cur = tgt
            res.setdefault(cur, [])
            last = None
            continue
        m = diag.match(line)
        if m:
            loc = re.sub(r"^.*/check-build/src/", "", m.group(1)) + ":" + (m.group(2) or "").rstrip(":")
            last = [m.group(4) + ": " + m.group(5), loc]
            res.setdefault(cur, []).append(last)
            continue
        m = cont.match(line)
        if m and last is not None and not re.match(r"(note|In |  )", m.group(4)):
            last[0] += " | " + m.group(4).strip()
            continue
        m = other.match(line)
        if m and not line.startswith("make"):
            last = [m.group(2) + ": " + m.group(3), m.group(1)]
            res.setdefault(cur, []).append(last)
            continue
        if line.startswith("make") and "Error" in line:
            res.setdefault(cur, []).append(["error: " + line, "make"])
    return res


def fmt_t(s):
    return "%d min %02d s" % (s // 60, s % 60) if s >= 60 else "%d s" % s


def configs_of(mode):
    """[(arch, tool, unit folder, log suffix)] for the trees run in that mode"""
    res = []
    for arch in ("x86_64", "i386", "arm64"):
        for cc in ("gcc", "clang"):
            d = os.path.join(run, mode, arch + "-" + cc)
            if cc == "gcc":
                res.append((arch, "gcc W=1", d, ""))
                res.append((arch, "sparse C=1", d, ".sparse"))
            else:
                res.append((arch, "clang W=1", d, ""))
    return res


def check(d, suf, steps):
    """{step: cell}, [(step, object, message, location)], bad"""
    cells, news, bad = {}, [], False
    base, cur, reported = None, {}, {}
    if not os.path.isdir(d):
        return {k: "not run" for k in steps}, news, False
    for k in steps:
        log = os.path.join(d, "step-%d%s.log" % (k, suf))
        rcf = os.path.join(d, "step-%d%s.rc" % (k, suf))
        if not os.path.exists(rcf):
            for kk in steps:
                cells.setdefault(kk, "not run")
            if os.path.exists(os.path.join(d, "failed")):
                cells[k] = "**%s**" % open(os.path.join(d, "failed")).read().strip()
                bad = True
            elif not os.path.exists(os.path.join(d, "done")):
                cells[k] = "not finished"
            break
        for o, ws in parse(log).items():
            cur[o] = ws
        if base is None:
            base = {o: {w[0] for w in ws} for o, ws in cur.items()}
            cells[k] = "%d objects, %d warnings" % (
                sum(1 for o in cur if o.endswith(".o")), sum(len(v) for v in cur.values()))
            continue
        new = {}     # (object, message) -> locations, in order
        for o, ws in sorted(cur.items()):
            for msg, loc in ws:
                if msg not in base.get(o, set()):
                    new.setdefault((o, msg), []).append(loc)
        failed = open(rcf).read().strip() != "0"
        cells[k] = ("**build failed** " if failed else "") + ("ok" if not new else "**%d new**" % len(new))
        bad = bad or failed or bool(new)
        for (o, msg), locs in new.items():
            uniq = list(dict.fromkeys(locs))
            where = ", ".join(uniq[:3]) + (" (+%d)" % (len(uniq) - 3) if len(uniq) > 3 else "")
            where += "; %d times" % len(locs) if len(locs) > 1 else ""
            # first step it appeared at; where: the last step it is seen at
            reported.setdefault((o, msg), [k, where])[1] = where
    news = [(k, o, msg, where) for (o, msg), (k, where) in reported.items()]
    return cells, news, bad


configs = configs_of("patches")
dconfigs = configs_of("dirs")
table, dtable, newlist, bad = {}, {}, [], False
for ci, (arch, tool, d, suf) in enumerate(configs):
    cells, news, b = check(d, suf, list(range(0, n + 1)))
    bad = bad or b
    for k, c in cells.items():
        table[(ci, k)] = c
    newlist += [("%s %s" % (arch, tool), str(k), o, m, loc) for k, o, m, loc in news]
for ci, (arch, tool, d, suf) in enumerate(dconfigs):
    cells, news, b = check(d, suf, [0, n])
    bad = bad or b
    dtable[(ci, 0)], dtable[(ci, n)] = cells.get(0, ""), cells.get(n, "")
    newlist += [("%s %s" % (arch, tool), "%d (directories)" % k, o, m, loc) for k, o, m, loc in news]

times = {}
for mode in ("patches", "dirs"):
    for arch in ("x86_64", "i386", "arm64"):
        for cc in ("gcc", "clang"):
            d = os.path.join(run, mode, arch + "-" + cc)
            if os.path.isdir(d):
                f = os.path.join(d, "done")
                sp = sum(int(open(os.path.join(d, x)).read()) for x in os.listdir(d) if x.endswith(".sparse.time"))
                times[(mode, arch + "-" + cc)] = (int(open(f).read()) if os.path.exists(f) else None, sp)

out = []
w = out.append
w("# make check-build: the series under W=1, sparse and clang, after each patch")
w("")
w("Generated by `scripts/check-build.sh` (`make check-build`) on %s; series: `%s` (%d patches)."
  % (datetime.date.today().isoformat(), os.path.relpath(patches, os.getcwd()) if patches.startswith(os.getcwd()) else patches, n))
w("")
w("Source: Debian's linux-source-6.1 (the rig's `pristine` tag) in a detached worktree; "
  "each build tree is `allmodconfig` with `CONFIG_WERROR=n` (W=1 warnings must stay warnings) "
  "and `CONFIG_KUNIT=y` (the series' built-in KUnit suites need it), then `make prepare`, then "
  "only the objects and directories below. Compilers: Debian 12's gcc 12 "
  "(`i686-linux-gnu-`, `aarch64-linux-gnu-` cross compilers), clang/LLVM 14 (`LLVM=1`), sparse; ccache; `-j2`.")
w("")
w("A warning is **new** when its message (file and line left out) was not printed for the same "
  "object on the pristine tree (step 0). Step k = patches 1..k applied, then every object the "
  "series touches is built (make rebuilds what changed: the objects patch k touches and those "
  "including a header it changes; objects not rebuilt keep the warnings of their last compile). "
  "A second pass builds the directories of the touched files on pristine and after the last patch. "
  "sparse runs on what each step compiled, in the gcc tree.")
w("")
hm = os.path.join(run, "patches", "i386-gcc", "highmem")
if os.path.exists(hm):
    w("i386: allmodconfig gives `%s`." % open(hm).read().strip())
    w("")
w("## Objects and directories")
w("")
w("| patch | objects built from it |")
w("|---|---|")
for i, files in enumerate(touched):
    o = [f[:-2] + ".o" for f in files if f.endswith(".c")]
    w("| %d %s | %s |" % (i + 1, series[i][:-6] if series[i].endswith(".patch") else series[i], ", ".join("`%s`" % x for x in o) or "(no .c file: headers/Kconfig/docs only, covered through the objects that include them)"))
w("")
w("Directories built (recursively, kbuild `make DIR/`) on pristine and after the last patch: %s."
  % (", ".join("`%s`" % x for x in dirs) or "none"))
if bigdirs:
    w("Not built as directories (more than DIR_MAX .c files; only the touched objects): %s."
      % ", ".join("`%s/`" % x for x in bigdirs))
w("")
for arch, tool, d, suf in configs[:1]:
    f = os.path.join(d, "objects-config")
    if os.path.exists(f):
        w("Kconfig state of the touched objects after the series (%s allmodconfig):" % arch)
        w("")
        for line in open(f):
            w("- `%s`" % line.strip())
        w("")
w("## Result per patch")
w("")
w("| step | " + " | ".join("%s %s" % (a, t) for a, t, _, _ in configs) + " |")
w("|---" * (len(configs) + 1) + "|")
for k in range(0, n + 1):
    name = "0 pristine" if k == 0 else "%d %s" % (k, series[k - 1][5:40])
    w("| %s | " % name + " | ".join(table.get((ci, k), "") for ci in range(len(configs))) + " |")
w("| directories + objects, pristine | " + " | ".join(dtable.get((ci, 0), "not run") for ci in range(len(dconfigs))) + " |")
w("| directories + objects, after patch %d | " % n + " | ".join(dtable.get((ci, n), "not run") for ci in range(len(dconfigs))) + " |")
w("")
w("Step 0 cells: objects compiled on pristine and the warnings they printed (the baseline). "
  "Other cells: **N new** = distinct warning messages not in the baseline, in the tree after that step.")
w("")
w("## New warnings")
w("")
if not newlist:
    w("None in the configurations that ran.")
else:
    w("Each distinct message once per configuration and object: the patch after which it first "
      "appears, where it is printed (as of the last step that compiled the object) and how often.")
    w("")
    w("| configuration | first after patch | object | where | message |")
    w("|---|---|---|---|---|")
    for cfg, k, o, msg, loc in newlist:
        w("| %s | %s | `%s` | `%s` | %s |" % (cfg, k, o, loc, msg.replace("|", "\\|")))
w("")
w("## Time")
w("")
w("Per build tree (allmodconfig, prepare and every step; a gcc tree's time includes its sparse passes):")
w("")
w("| pass | build tree | s | of which sparse |")
w("|---|---|---:|---:|")
tot = 0
for (mode, u), (t, sp) in times.items():
    w("| %s | %s | %s | %s |" % ("after each patch" if mode == "patches" else "directories", u,
                                 "%d (%s)" % (t, fmt_t(t)) if t is not None else "not finished",
                                 sp if u.endswith("gcc") else ""))
    tot += t or 0
w("| **total** | | **%d (%s)** | |" % (tot, fmt_t(tot)))
w("")
if wall >= 0:
    w("This invocation's wall time: %s (trees already checked for this series are not rebuilt). "
      "Measured on the shared 2-core machine, with other builds and QEMU runs beside it." % fmt_t(wall))
else:
    w("Written from the logs with `--report-only` (trees not finished are marked so). "
      "Measured on the shared 2-core machine, with other builds and QEMU runs beside it.")
w("")
w("## Not covered")
w("")
w("- Nothing is linked: no vmlinux, no modules (`.ko`), no modpost: section mismatches, "
  "undefined or unexported symbols at link time are not checked here (`make check-patches` "
  "links the guest kernel after each patch).")
w("- Only the objects built from the touched .c files, and the directories listed above (at "
  "step 0 and after the last patch only). A header the series changes (`include/linux/skbuff.h`, "
  "`include/net/sock.h`, `include/linux/mm.h`, `mm/slab.h`, ...) is compiled only through those "
  "objects, not through its other users (drivers/net/ as a whole, the rest of net/).")
w("- allmodconfig only (with WERROR off and KUNIT=y); no other configuration, no W=2/W=3, "
  "no `make htmldocs` for the Documentation changes, no runtime checks.")
w("- Architectures: x86_64, i386 and arm64 only, each with gcc 12 and clang 14 as Debian 12 ships them.")
w("")
open(report, "w").write("\n".join(out))
print("\n".join(out))
sys.exit(1 if bad or newlist else 0)
PY
log "check-build: report in $REPORT"
exit $rc
}
