# bash completion for blockc(1): commands, flags and selection names.
# Installed as share/bash-completion/completions/blockc; works with or without the
# bash-completion package.

# Selection names: the daemon's list (built-in catalog plus selections.d) when it answers,
# else the built-in catalog (Sources/BlockCore/Catalog.swift; a test keeps the two in step).
_blockc_selections() {
    local out names
    out=$(timeout 1 "$@" selections --json 2>/dev/null) || out=
    names=$(printf '%s\n' "$out" | grep -o '"name" *: *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/')
    if [ -z "$names" ]; then
        names="discord facebook instagram linkedin messenger netflix pinterest reddit snapchat steam threads tiktok twitch whatsapp x youtube"
    fi
    printf '%s\n' $names
}

_blockc() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()

    # Values of flags that take one.
    case "$prev" in
        --socket)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --minutes | --for | --until | --name | --daily)
            return ;;
        --weekly)
            COMPREPLY=($(compgen -W "mon tue wed thu fri sat sun mon-fri sat-sun" -- "$cur"))
            return ;;
    esac

    # The command words so far (global options and their values skipped).
    local i word words=() client=("${COMP_WORDS[0]}")
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case "$word" in
            --socket) client+=(--socket "${COMP_WORDS[i+1]}"); ((i++)) ;;
            --minutes | --for | --until | --name | --daily | --weekly | --reason) ((i++)) ;;
            -*) ;;
            *) words+=("$word") ;;
        esac
    done

    local commands="start stop status schedule selections failures limit more requests approve deny cancel stats watch reload version help"
    if ((${#words[@]} == 0)); then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--socket --help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    local flags="" selections=false
    case "${words[0]}" in
        start)
            flags="--minutes --for --until --lock --name --json --more-time --delay --more-time-per-day --user"
            selections=true ;;
        stop | reload | version | cancel) ;;
        more)
            flags="--today --reason --json"
            ((${#words[@]} == 1)) && selections=true ;;
        requests | approve) flags="--json" ;;
        deny) flags="--reason --json" ;;
        status) flags="--json --watch --all --user --all-users" ;;
        schedule)
            case "${words[1]:-}" in
                "") COMPREPLY=($(compgen -W "add remove list" -- "$cur")); return ;;
                add)
                    flags="--daily --weekly --more-time --delay --more-time-per-day --user"
                    ((${#words[@]} >= 3)) && selections=true ;;
                list) flags="--json" ;;
            esac ;;
        selections)
            case "${words[1]:-}" in
                "")
                    flags="--json"
                    [[ $cur != -* ]] && COMPREPLY=($(compgen -W "show" -- "$cur")) ;;
                show)
                    flags="--json"
                    ((${#words[@]} == 2)) && selections=true ;;
            esac ;;
        failures) flags="--json --clear" ;;
        limit)
            case "${words[1]:-}" in
                "") COMPREPLY=($(compgen -W "add remove list" -- "$cur")); return ;;
                add)
                    flags="--days --warn --more-time --delay --more-time-per-day --user"
                    ((${#words[@]} >= 4)) && selections=true ;;
                list) flags="--json" ;;
            esac ;;
        stats) flags="--json" ;;
        watch) flags="--json --notify" ;;
        help)
            ((${#words[@]} == 1)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            return ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY+=($(compgen -W "$flags --help" -- "$cur"))
    elif $selections; then
        COMPREPLY+=($(compgen -W "$(_blockc_selections "${client[@]}")" -- "$cur"))
    fi
}

complete -F _blockc blockc
