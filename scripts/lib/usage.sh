# shellcheck shell=bash
# Shared by the scripts of scripts/ and bench/: a script's --help is its header comment (from its
# second line up to `set -euo pipefail`), so that what --help says and what the file
# says are one text. Source it before the script changes directory: it resolves the
# script's own path then.

USAGE_SCRIPT=$(realpath -- "$0")
readonly USAGE_SCRIPT

# Prints the script's header comment, without the comment marks.
print_header() {
    sed -n '2,/^set -euo/p' "$USAGE_SCRIPT" | sed '$d; s/^# \{0,1\}//'
}

# Answers an argument $1 of -h or --help with the header on stdout (exit 0); returns
# for anything else. A bad command line is the script's own usage error, on stderr.
answer_help() {
    case $1 in
        -h | --help) print_header; exit 0 ;;
    esac
}

# The answer to an argument $1 the script does not take: -h/--help prints the header
# (exit 0); anything else is refused in one line saying what the script takes, $2
# (exit 64, the scripts' usage status).
answer_help_or_refuse() {
    answer_help "$1"
    echo "${USAGE_SCRIPT##*/}: unknown argument '$1' ($2)" >&2
    exit 64
}
