#!/usr/bin/env bash
# Do the Python test peers in .venv need Debian packages that scripts/install_deps.sh does not
# bring? pip wheels bundle most native libraries, but their extensions may still load system
# ones. This maps every system library the venv's extensions load to its Debian package and
# prints those outside the Depends-closure of the install script's packages (essential and
# required packages are on every Debian machine). Exit 0: none missing; 1: missing (listed).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .venv ] || { echo "python_peer_deps: no .venv; run scripts/python_peers.sh first" >&2; exit 2; }
declared=$(sed -n '/packages=(/,/)/p' scripts/install_deps.sh | tr -d '()"' | sed 's/packages=//' \
           | tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9+.-]+$')
# The path ldd prints and the file it resolves to: dpkg knows merged-/usr files by either.
libs=$(find -H .venv -name '*.so*' -type f -print0 | xargs -0 -r ldd 2>/dev/null \
       | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | grep -v "^$PWD/.venv/" | sort -u)
used=$( { echo "$libs"; echo "$libs" | xargs -r readlink -f; } | sort -u \
       | { xargs -r dpkg -S 2>/dev/null || true; } | sed 's/: .*//' | tr ',' '\n' | sed 's/ //g; s/:.*//' | sort -u)
closure=$( { apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
               --no-replaces --no-enhances $declared 2>/dev/null \
             | sed -n 's/^\([a-z0-9][^ <]*\)$/\1/p; s/^ *\(Pre\)\{0,1\}Depends: \([^<][^ ]*\)$/\2/p' | sed 's/:.*//'
           dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' | awk '$2=="yes" || $3=="required" {print $1}'
         } | sort -u)
missing=$(comm -23 <(echo "$used") <(echo "$closure"))
if [ -n "$missing" ]; then
  echo "python_peer_deps: the test peers load libraries from Debian packages the install script does not bring:"
  echo "$missing" | sed 's/^/  /'
  exit 1
fi
echo "python_peer_deps: the test peers load $(echo "$used" | grep -c . || true) Debian packages, all installed by scripts/install_deps.sh or essential."
