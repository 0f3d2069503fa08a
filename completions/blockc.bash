# bash completion for blockc(1): commands, flags, and the names they take (selections, users
# and @groups, blocks, schedules, limits, request ids).
# Installed as share/bash-completion/completions/blockc; works with or without the
# bash-completion package.

# Selection names: the daemon's list (built-in catalog plus selections.d) when it answers,
# else the built-in catalog (Sources/BlockCore/Config/Catalog.swift; a test keeps the two in step).
_blockc_selections() {
    local out names
    out=$(timeout 1 "$@" selections --json 2>/dev/null) || out=
    names=$(printf '%s\n' "$out" | grep -o '"name" *: *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/')
    if [ -z "$names" ]; then
        names="discord facebook instagram linkedin messenger netflix pinterest reddit snapchat steam threads tiktok twitch whatsapp x youtube"
    fi
    printf '%s\n' $names
}

# The daemon's answer to `CLIENT... ARGS... --json` as its innermost objects, one a line
# (activities, requests and delayed changes hold no object), or nothing when it does not
# answer within a second.
_blockc_objects() {
    timeout 1 "$@" 2>/dev/null | grep -o '{[^{}]*}'
}

# The string values of key $1 in the objects on stdin.
_blockc_values() {
    grep -o "\"$1\" *: *\"[^\"]*\"" | sed 's/.*"\([^"]*\)"$/\1/'
}

# What names a thing the daemon holds: `stop` the active blocks (status --json, kind "block"),
# `schedule remove` and `limit remove` theirs, `approve` and `deny` the pending requests' ids,
# `cancel` those and the activities whose stop or removal waits for Delay=.
_blockc_names() {
    local what=$1
    shift
    case $what in
        blocks) _blockc_objects "$@" status --json | grep '"kind" *: *"block"' | _blockc_values name ;;
        schedules) _blockc_objects "$@" schedule list --json | _blockc_values name ;;
        limits) _blockc_objects "$@" limit list --json | _blockc_values name ;;
        requests) _blockc_objects "$@" requests --json | grep '"state" *: *"pending"' | _blockc_values id ;;
        cancellable)
            local out
            out=$(_blockc_objects "$@" requests --json)
            printf '%s\n' "$out" | grep '"state" *: *"pending"' | _blockc_values id
            printf '%s\n' "$out" | _blockc_values pending ;;
    esac
}

# `--user NAME`: user names, and with $1 = groups also @group names. bash splits words at
# '@' (COMP_WORDBREAKS) but completes the word with its '@' (a special prefix), so after
# '--user @wh' the word is '@' and 'wh'.
_blockc_users() {
    local word=$cur
    [[ $prev == @ ]] && word=@$cur
    [[ $word == @* ]] || COMPREPLY=($(compgen -u -- "$word"))
    if [[ $1 == groups && ( -z $word || $word == @* ) ]]; then
        COMPREPLY+=($(compgen -P @ -g -- "${word#@}"))
    fi
}

_blockc() {
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()

    # The command words so far (options and their values skipped).
    local i word words=() client=("${COMP_WORDS[0]}")
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case "$word" in
            --socket) client+=(--socket "${COMP_WORDS[i+1]}"); ((i++)) ;;
            --user)
                ((i++))
                # '--user @wheel' is three words where '@' breaks words.
                [[ ${COMP_WORDS[i]} == @ ]] && ((i++)) ;;
            --minutes | --for | --until | --name | --daily | --weekly | --days | --warn | --reason | \
                --more-time | --delay | --more-time-per-day | --last | --to | --day | --by | --html) ((i++)) ;;
            -*) ;;
            *) words+=("$word") ;;
        esac
    done

    # Values of flags that take one.
    case "$prev" in
        --socket)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --minutes | --for | --until | --name | --daily | --warn | --reason | --delay | --more-time-per-day | --to | --day)
            return ;;
        --by)
            COMPREPLY=($(compgen -W "selection app user" -- "$cur"))
            return ;;
        --html)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --last)
            COMPREPLY=($(compgen -W "7 14 28 35" -- "$cur"))
            return ;;
        --weekly | --days)
            COMPREPLY=($(compgen -W "mon tue wed thu fri sat sun mon-fri sat-sun" -- "$cur"))
            return ;;
        --more-time)
            COMPREPLY=($(compgen -W "no self approval" -- "$cur"))
            return ;;
        --user | @)
            if [[ $prev == --user || ${COMP_WORDS[COMP_CWORD-2]} == --user ]]; then
                if [[ ${words[0]:-} == status || ${words[0]:-} == report || ${words[0]:-} == screen ]]; then _blockc_users; else _blockc_users groups; fi
                return
            fi ;;
    esac

    local commands="start stop status schedule selections failures limit more requests approve deny cancel stats report screen watch reload version help"
    if ((${#words[@]} == 0)); then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--socket --help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    # names: what the word at the cursor names, if anything.
    local flags="" names=""
    case "${words[0]}" in
        start)
            flags="--minutes --for --until --lock --name --json --more-time --delay --more-time-per-day --user"
            names=selections ;;
        stop) ((${#words[@]} == 1)) && names=blocks ;;
        reload | version) ;;
        cancel) ((${#words[@]} == 1)) && names=cancellable ;;
        more)
            flags="--today --reason --json"
            ((${#words[@]} == 1)) && names=more ;;
        requests) flags="--json" ;;
        approve)
            flags="--json"
            ((${#words[@]} == 1)) && names=requests ;;
        deny)
            flags="--reason --json"
            ((${#words[@]} == 1)) && names=requests ;;
        status) flags="--json --watch --all --user --all-users" ;;
        report) flags="--last --to --day --week --month --by --user --all-users --json --csv --html" ;;
        screen) flags="--user --json --pam" ;;
        schedule)
            case "${words[1]:-}" in
                "") COMPREPLY=($(compgen -W "add remove list" -- "$cur")); return ;;
                add)
                    flags="--daily --weekly --more-time --delay --more-time-per-day --user"
                    ((${#words[@]} >= 3)) && names=selections ;;
                remove) ((${#words[@]} == 2)) && names=schedules ;;
                list) flags="--json" ;;
            esac ;;
        selections)
            case "${words[1]:-}" in
                "")
                    flags="--json"
                    [[ $cur != -* ]] && COMPREPLY=($(compgen -W "show" -- "$cur")) ;;
                show)
                    flags="--json"
                    ((${#words[@]} == 2)) && names=selections ;;
            esac ;;
        failures) flags="--json --clear" ;;
        limit)
            case "${words[1]:-}" in
                "") COMPREPLY=($(compgen -W "add remove list" -- "$cur")); return ;;
                add)
                    flags="--days --warn --more-time --delay --more-time-per-day --user"
                    ((${#words[@]} >= 4)) && names=selections ;;
                remove) ((${#words[@]} == 2)) && names=limits ;;
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
    elif [[ $names == selections ]]; then
        COMPREPLY+=($(compgen -W "$(_blockc_selections "${client[@]}")" -- "$cur"))
    elif [[ $names == more ]]; then
        # `more NAME`: a selection, or a limit's name (more use of its allowance).
        COMPREPLY+=($(compgen -W "$(_blockc_selections "${client[@]}") $(_blockc_names limits "${client[@]}")" -- "$cur"))
    elif [[ -n $names ]]; then
        COMPREPLY+=($(compgen -W "$(_blockc_names "$names" "${client[@]}")" -- "$cur"))
    fi
}

complete -F _blockc blockc
