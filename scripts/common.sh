# shellcheck shell=bash
# Shared helpers of scripts/* (sourced, not run).

THEO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Prints a section header.
theo_section() {
  printf '\n==== %s ====\n' "$*"
}

# Resolves a build directory: absolute paths as given, relative ones under the repository root.
theo_build_dir() {
  local dir="${1:-build}"
  case "$dir" in
    /*) printf '%s\n' "$dir" ;;
    *) printf '%s\n' "$THEO_ROOT/$dir" ;;
  esac
}
