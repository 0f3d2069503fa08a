# fish completion for blockc(1): commands, flags, and the names they take (selections, users
# and @groups, blocks, schedules, limits, request ids).
# Installed as share/fish/vendor_completions.d/blockc.fish.

# The client as typed, with the --socket given on the line.
function __blockc_client
    set -l tokens (commandline -opc)
    set -l client $tokens[1]
    if set -l i (contains -i -- --socket $tokens)
        set -a client --socket $tokens[(math $i + 1)]
    end
    printf '%s\n' $client
end

# Selection names: the daemon's list (built-in catalog plus selections.d) when it answers,
# else the built-in catalog (Sources/BlockCore/Config/Catalog.swift; a test keeps the two in step).
function __blockc_selections
    set -l client (__blockc_client)
    set -l names (timeout 1 $client selections --json 2>/dev/null | string match -ar '"name" *: *"[^"]*"' | string replace -r '.*"([^"]*)"$' '$1')
    if test (count $names) -eq 0
        set names discord facebook instagram linkedin messenger netflix pinterest reddit snapchat steam threads tiktok twitch whatsapp x youtube
    end
    printf '%s\n' $names
end

# The string values of key $argv[1] in the innermost JSON objects that match the regex
# $argv[2] ('' for all) of the daemon's answer to `blockc [--socket S] $argv[3..]` (activities,
# requests and delayed changes hold no object); nothing when it does not answer within a second.
function __blockc_ask
    set -l client (__blockc_client)
    timeout 1 $client $argv[3..-1] 2>/dev/null | string match -ar '\{[^{}]*\}' | string match -er -- $argv[2] |
        string match -ar '"'$argv[1]'" *: *"[^"]*"' | string replace -r '.*"([^"]*)"$' '$1'
end

# What names a thing the daemon holds: `stop` the active blocks (status --json, kind "block"),
# `schedule remove` and `limit remove` theirs, `approve`, `deny` and `cancel` the pending
# requests' ids, `cancel` also the activities whose stop or removal waits for Delay=.
function __blockc_names
    switch $argv[1]
        case blocks
            __blockc_ask name '"kind" *: *"block"' status --json
        case schedules
            __blockc_ask name '' schedule list --json
        case limits
            __blockc_ask name '' limit list --json
        case requests
            __blockc_ask id '"state" *: *"pending"' requests --json
        case delayed
            __blockc_ask pending '' requests --json
    end
end

# `--user NAME`: a user, or a group as @NAME.
function __blockc_users_and_groups
    __fish_complete_users
    __fish_complete_groups | string replace -r '^' '@'
end

# The command words so far, without options and their values.
function __blockc_words
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $t
            case --socket --minutes --for --until --name --daily --weekly --days --warn --reason --more-time --delay \
                --more-time-per-day --user
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end

function __blockc_needs_command
    test (count (__blockc_words)) -eq 0
end

# True when the command words are exactly $argv.
function __blockc_at
    set -l w (__blockc_words)
    test "$w" = "$argv"
end

# True when the command words start with $argv.
function __blockc_in
    set -l w (__blockc_words)
    set -l n (count $argv)
    test (count $w) -ge $n; and test "$w[1..$n]" = "$argv"
end

function __blockc_selection_position
    set -l w (__blockc_words)
    switch "$w[1]"
        case start
            return 0
        case schedule
            test "$w[2]" = add; and test (count $w) -ge 3
        case limit
            test "$w[2]" = add; and test (count $w) -ge 4
        case selections
            test "$w[2]" = show; and test (count $w) -eq 2
        case '*'
            return 1
    end
end

complete -c blockc -f
complete -c blockc -l socket -r -F -d "the daemon's socket"
complete -c blockc -s h -l help -d 'print help'
complete -c blockc -n __blockc_needs_command -l version -d 'print the version'

complete -c blockc -n __blockc_needs_command -a start -d 'block selections now until the end'
complete -c blockc -n __blockc_needs_command -a stop -d 'end a block early'
complete -c blockc -n __blockc_needs_command -a status -d 'what is blocked, why, and until when'
complete -c blockc -n __blockc_needs_command -a schedule -d 'add, remove or list schedules'
complete -c blockc -n __blockc_needs_command -a selections -d 'list the selections or show one'
complete -c blockc -n __blockc_needs_command -a failures -d 'broken configuration, enforcement errors and other failures (resolved ones marked)'
complete -c blockc -n __blockc_needs_command -a limit -d 'add, remove or list daily usage limits'
complete -c blockc -n __blockc_needs_command -a more -d 'ask for more time for a blocked selection or a used-up limit'
complete -c blockc -n __blockc_needs_command -a requests -d 'pending more-time requests, grants and delayed changes'
complete -c blockc -n __blockc_needs_command -a approve -d 'grant a more-time request'
complete -c blockc -n __blockc_needs_command -a deny -d 'refuse a more-time request'
complete -c blockc -n __blockc_needs_command -a cancel -d 'keep an activity whose stop waits for Delay=, or withdraw a request'
complete -c blockc -n __blockc_needs_command -a stats -d 'shield hits per selection per day'
complete -c blockc -n __blockc_needs_command -a report -d 'per day, how long each selection was blocked and each app ran'
complete -c blockc -n __blockc_needs_command -a screen -d 'whether you may be at the screen now, or what keeps you off it'
complete -c blockc -n __blockc_needs_command -a watch -d "follow the daemon's events"
complete -c blockc -n __blockc_needs_command -a reload -d "reload the daemon's configuration"
complete -c blockc -n __blockc_needs_command -a version -d 'print the client and daemon versions'
complete -c blockc -n __blockc_needs_command -a help -d 'help for a command'

complete -c blockc -n '__blockc_at help' -a 'start stop status schedule selections failures limit more requests approve deny cancel stats report screen watch reload version'
complete -c blockc -n '__blockc_in more' -l today -d 'the rest of the local day'
complete -c blockc -n '__blockc_in more; or __blockc_in deny' -l reason -x -d 'why, shown to whoever answers'

complete -c blockc -n '__blockc_in start' -l minutes -x -d 'whole minutes'
complete -c blockc -n '__blockc_in start' -l for -x -d 'a duration such as 1h30m or "2 hours"'
complete -c blockc -n '__blockc_in start' -l until -x -d 'HH:MM, 10pm, tomorrow 07:00 or an ISO 8601 date-time'
complete -c blockc -n '__blockc_in start' -l lock -d 'cannot be stopped early by anyone'
complete -c blockc -n '__blockc_in start' -l name -x -d 'name of the block'
complete -c blockc -n '__blockc_at stop' -a '(__blockc_names blocks)' -d block
complete -c blockc -n '__blockc_at approve; or __blockc_at deny; or __blockc_at cancel' -a '(__blockc_names requests)' -d request
complete -c blockc -n '__blockc_at cancel' -a '(__blockc_names delayed)' -d 'waits for Delay='
complete -c blockc -n __blockc_selection_position -a '(__blockc_selections)' -d selection

complete -c blockc -n '__blockc_in status' -l watch -d 'redraw a live countdown'
complete -c blockc -n '__blockc_in status' -l all -d 'every activity, idle ones too'
complete -c blockc -n '__blockc_in status' -l all-users -d "every user's activities"
complete -c blockc -n '__blockc_in report' -l all-users -d 'the whole machine'
complete -c blockc -n '__blockc_in report' -l csv -d 'one row per figure, CSV'
complete -c blockc -n '__blockc_in report' -l user -x -a '(__fish_complete_users)' -d "that user's report"
complete -c blockc -n '__blockc_in report' -l last -x -a '7 14 28 35' -d 'how many days'
complete -c blockc -n '__blockc_in report' -l to -x -d 'the last day, YYYY-MM-DD'
complete -c blockc -n '__blockc_in report' -l day -x -d 'one day, YYYY-MM-DD'
complete -c blockc -n '__blockc_in report' -l week -d 'the calendar week (of DATE)'
complete -c blockc -n '__blockc_in report' -l month -d 'the calendar month (of DATE or YYYY-MM)'
complete -c blockc -n '__blockc_in report' -l by -x -a 'selection app user' -d 'group the time in apps'
complete -c blockc -n '__blockc_in report' -l html -r -F -d 'write one self-contained HTML page'
complete -c blockc -n '__blockc_in screen' -l user -x -a '(__fish_complete_users)' -d 'that user'
complete -c blockc -n '__blockc_in screen' -l pam -d "pam_exec's check of PAM_USER"
complete -c blockc -n '__blockc_in start; or __blockc_in schedule add; or __blockc_in limit add' -l user -x -a '(__blockc_users_and_groups)' -d 'for this user only (@group: its members)'
complete -c blockc -n '__blockc_in status' -l user -x -a '(__fish_complete_users)' -d "that user's view"

complete -c blockc -n '__blockc_at schedule' -a 'add remove list'
complete -c blockc -n '__blockc_at schedule remove' -a '(__blockc_names schedules)' -d schedule
complete -c blockc -n '__blockc_in schedule add' -l daily -x -d 'a window HH:MM-HH:MM every day'
complete -c blockc -n '__blockc_in schedule add' -l weekly -x -a 'mon tue wed thu fri sat sun mon-fri sat-sun' -d 'days, then the window'

complete -c blockc -n '__blockc_at selections' -a show -d 'the domains and apps of one selection'

complete -c blockc -n '__blockc_in failures' -l clear -d 'empty the failure list'

complete -c blockc -n '__blockc_at limit' -a 'add remove list'
complete -c blockc -n '__blockc_at limit remove' -a '(__blockc_names limits)' -d limit
# `more NAME`: a selection, or a limit's name (more use of its allowance).
complete -c blockc -n '__blockc_at more' -a '(__blockc_selections)' -d selection
complete -c blockc -n '__blockc_at more' -a '(__blockc_names limits)' -d limit
complete -c blockc -n '__blockc_in limit add' -l days -x -a 'mon tue wed thu fri sat sun mon-fri sat-sun' -d 'the days it counts'
complete -c blockc -n '__blockc_in limit add' -l warn -x -d 'warn this long before the end'

complete -c blockc -n '__blockc_in watch' -l notify -d 'desktop notifications'

set -l __blockc_policy '__blockc_in start; or __blockc_in schedule add; or __blockc_in limit add'
complete -c blockc -n $__blockc_policy -l more-time -x -a 'no self approval' -d 'who may get more time'
complete -c blockc -n $__blockc_policy -l delay -x -d 'how long a stop, removal or grant waits'
complete -c blockc -n $__blockc_policy -l more-time-per-day -x -d 'more time given a day'

complete -c blockc -n '__blockc_in start; or __blockc_in status; or __blockc_in schedule list; or __blockc_in selections; or __blockc_in failures; or __blockc_in limit list; or __blockc_in more; or __blockc_in requests; or __blockc_in approve; or __blockc_in deny; or __blockc_in stats; or __blockc_in report; or __blockc_in screen; or __blockc_in watch' -l json -d 'JSON output'
