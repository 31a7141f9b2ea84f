# gpuq-completion.bash: bash completion for gpuq(1), installed as
# $(datadir)/bash-completion/completions/gpuq (loaded on demand by
# bash-completion) or sourced by hand from ~/.bashrc.
#
# Completes commands, their options, job states, GPU types, job files,
# user names and job ids. The commands are the ones `gpuq help` lists, so
# a new command completes without touching this file. Job ids come from
# the daemon itself through `gpuq status --json`, on the socket given by
# --socket or $GPUQ_SOCKET; when the daemon is down or slow this
# completes nothing and says nothing. It needs only bash and coreutils:
# not bash-completion's helpers, not jq.

# When `gpuq help` cannot be run.
_gpuq_fallback_commands='submit status show logs wait history cancel hold release ping metrics doctor help'
_gpuq_states='held queued launching pending running cancelling succeeded failed cancelled'
_gpuq_gpus='nvidia-tesla-t4 nvidia-l4 nvidia-tesla-v100 nvidia-tesla-p100 nvidia-tesla-p4 nvidia-tesla-a100 nvidia-a100-80gb nvidia-h100-80gb nvidia-h100-mega-80gb nvidia-h200-141gb nvidia-b200'
# The commands of each gpuq seen in this shell: program path, then list.
_gpuq_commands_of=
_gpuq_commands_list=

# _gpuq_reply COMPGEN-ARGS...: set COMPREPLY to compgen's words, one per
# line, so file names with spaces stay whole.
_gpuq_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# _gpuq_load_commands PROG: set _gpuq_commands_list to the commands of
# PROG (an executable path, or empty) as `PROG help` lists them under
# "Commands:"; asked once a shell for each PROG.
_gpuq_load_commands()
{
	local prog=$1 line list='' in=0

	[[ -n $prog && $prog == "$_gpuq_commands_of" ]] && return
	if [[ -n $prog ]]; then
		while IFS= read -r line; do
			if [[ $line == Commands: ]]; then
				in=1
			elif ((in)); then
				[[ $line =~ ^[[:space:]]+([a-z][a-z0-9-]*)([[:space:]]|$) ]] ||
				    break
				list+="${list:+ }${BASH_REMATCH[1]}"
			fi
		done < <("$prog" help 2>/dev/null </dev/null)
	fi
	_gpuq_commands_of=$prog
	_gpuq_commands_list=${list:-$_gpuq_fallback_commands}
}

# _gpuq_options COMMAND: print the options COMMAND takes; with no
# COMMAND, gpuq's own.
_gpuq_options()
{
	case $1 in
	'')		echo '--socket --timeout --help --version' ;;
	submit)		echo '-q --quiet --hold --name --priority --after --from' \
			    '--dry-run --wait --timeout --help' ;;
	wait)		echo '-q --quiet --timeout --help' ;;
	history)	echo '--since --until --user --state --name --by --json' \
			    '--csv --help' ;;
	status)		echo '--all --expand --state --user --limit --json --help' ;;
	show)		echo '--json --help' ;;
	logs)		echo '-f --follow --attempt --node --since --tail --help' ;;
	plan)		echo '--json --all --help' ;;
	quotas)		echo '--region --gpu --json --help' ;;
	prices)		echo '--gpu --region --json --help' ;;
	doctor)		echo '--json --help' ;;
	*)		echo '--help' ;;
	esac
}

# _gpuq_takes_value WORD: true if option WORD takes the next word as its
# value.
_gpuq_takes_value()
{
	case $1 in
	-s|--socket|-t|--timeout|--name|--priority|--state|-u|--user|-n|\
	--limit|--region|--gpu|--from|--after|-a|--attempt|-N|--node|--since|\
	--tail|--until|--by)
		return 0 ;;
	esac
	return 1
}

# _gpuq_ids PROG COMMAND SOCKET: print the ids of the jobs COMMAND can act
# on, one per line, asking the daemon; nothing if it cannot answer.
_gpuq_ids()
{
	local prog=$1 cmd=$2 sock=$3 out
	local -a args=(--timeout 2s)

	[[ -n $sock ]] && args+=(--socket "$sock")
	args+=(status --json --limit 1000)
	case $cmd in
	show|logs)	args+=(--all) ;;
	hold)		args+=(--state queued) ;;
	release)	args+=(--state held) ;;
	esac		# cancel, wait: the default, every live job
	if type -P timeout >/dev/null; then
		out=$(timeout 3 "$prog" "${args[@]}" 2>/dev/null </dev/null)
	else
		out=$("$prog" "${args[@]}" 2>/dev/null </dev/null)
	fi || return 0
	# Each job is an object whose first-level "id" follows '{' or ','
	# (an "id" quoted inside a string follows a backslash). Nested
	# attempts carry "number", not "id".
	printf '%s' "$out" | tr '\n' ' ' |
	    grep -oE '[{,][[:space:]]*"id"[[:space:]]*:[[:space:]]*[0-9]+' |
	    grep -oE '[0-9]+$'
}

# _gpuq_files CUR: complete job files (YAML or JSON) and directories; any
# file if none of those match.
_gpuq_files()
{
	local cur=$1 f
	local -a all=()

	compopt -o filenames 2>/dev/null
	while IFS= read -r f; do
		if [[ -d $f || $f == *.yaml || $f == *.yml || $f == *.json ]]; then
			COMPREPLY+=("$f")
		fi
		all+=("$f")
	done < <(compgen -f -- "$cur")
	if ((${#COMPREPLY[@]} == 0)); then
		COMPREPLY=("${all[@]}")
	fi
}

# _gpuq_value OPTION CUR: complete the value of OPTION; return 1 if
# OPTION takes no value, so the caller goes on.
_gpuq_value()
{
	local cur=$2 done=''

	case $1 in
	-s|--socket)
		compopt -o filenames 2>/dev/null
		_gpuq_reply -f -- "$cur"
		;;
	--state)
		# A comma-separated list: complete its last item.
		if [[ $cur == *,* ]]; then
			done=${cur%,*},
			cur=${cur##*,}
		fi
		_gpuq_reply -W "$_gpuq_states live all" -- "$cur"
		[[ -n $done ]] && COMPREPLY=("${COMPREPLY[@]/#/$done}")
		;;
	--gpu)
		_gpuq_reply -W "$_gpuq_gpus" -- "$cur"
		;;
	--from)
		# The other services whose job files submit converts.
		_gpuq_reply -W 'vertex batch' -- "$cur"
		;;
	-u|--user)
		_gpuq_reply -u -- "$cur"
		;;
	--by)
		_gpuq_reply -W 'user gpu service day' -- "$cur"
		;;
	-t|--timeout|--name|--priority|-n|--limit|--region|--after|-a|\
	--attempt|-N|--node|--since|--tail|--until)
		COMPREPLY=()
		;;
	*)
		return 1
		;;
	esac
	return 0
}

# _gpuq: the completion function bash calls for gpuq (complete -F).
_gpuq()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' opt='' prefix=''
	local cmd='' sock=${GPUQ_SOCKET-} prog=${COMP_WORDS[0]} w i
	local -a seen=()

	COMPREPLY=()
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}

	# Which option is the word under the cursor the value of? bash splits
	# --state=queued into "--state" "=" "queued" when '=' is a word break.
	if [[ $cur == = ]]; then
		opt=$prev
		cur=''
	elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		prefix=$opt=
		cur=${cur#*=}
	else
		opt=$prev
	fi

	# The command, the socket and the ids already typed, from the words
	# before the cursor.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if _gpuq_takes_value "$w"; then
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			if [[ $w == -s || $w == --socket ]] && ((i + 1 < COMP_CWORD))
			then
				sock=${COMP_WORDS[i + 1]}
			fi
			((i++))
			continue
		fi
		case $w in
		--socket=*)
			sock=${w#--socket=}
			;;
		-*|=)
			;;
		*)
			if [[ -z $cmd ]]; then
				cmd=$w
			else
				seen+=("$w")
			fi
			;;
		esac
	done
	sock=${sock/#\~/$HOME}

	# The gpuq being completed: as typed if it is a path, else on PATH.
	prog=${prog/#\~/$HOME}
	if [[ $prog != */* ]]; then
		prog=$(type -P "$prog") || prog=''
	fi
	[[ -n $prog && ! -x $prog ]] && prog=''

	if _gpuq_value "$opt" "$cur"; then
		if [[ -n $prefix ]]; then
			COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
		fi
		return 0
	fi

	if [[ $cur == -* ]]; then
		_gpuq_reply -W "$(_gpuq_options "$cmd")" -- "$cur"
		return 0
	fi

	case $cmd in
	''|help)
		[[ $cmd == help ]] && ((${#seen[@]} > 0)) && return 0
		_gpuq_load_commands "$prog"
		_gpuq_reply -W "$_gpuq_commands_list" -- "$cur"
		;;
	submit|plan)
		((${#seen[@]} == 0)) && _gpuq_files "$cur"
		;;
	show|cancel|hold|release|wait)
		# show takes one id; the others any number, each once.
		[[ $cmd == show ]] && ((${#seen[@]} > 0)) && return 0
		[[ -n $prog ]] || return 0
		local -a ids=()
		local id s dup
		while IFS= read -r id; do
			dup=''
			for s in "${seen[@]}"; do
				[[ $s == "$id" ]] && dup=1
			done
			[[ -z $dup && $id == "$cur"* ]] && ids+=("$id")
		done < <(_gpuq_ids "$prog" "$cmd" "$sock")
		COMPREPLY=("${ids[@]}")
		;;
	esac
	return 0
}

complete -F _gpuq gpuq
