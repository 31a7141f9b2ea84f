# gpuq-completion.bash: bash completion for gpuq(1), installed as
# $(datadir)/bash-completion/completions/gpuq (loaded on demand by
# bash-completion) or sourced by hand from ~/.bashrc.
#
# Completes subcommands, their options, job states, GPU types, job files,
# user names and job ids. Job ids come from the daemon itself through
# `gpuq status --json`, on the socket given by --socket or $GPUQ_SOCKET;
# when the daemon is down or slow this completes nothing and says nothing.
# It needs only bash and coreutils: not bash-completion's helpers, not jq.

_gpuq_subcommands='submit status show cancel hold release ping plan quotas prices help'
_gpuq_states='held queued launching pending running succeeded failed cancelling cancelled'
_gpuq_gpus='nvidia-tesla-t4 nvidia-l4 nvidia-tesla-v100 nvidia-tesla-p100 nvidia-tesla-p4 nvidia-tesla-a100 nvidia-a100-80gb nvidia-h100-80gb nvidia-h100-mega-80gb nvidia-h200-141gb nvidia-b200'

# _gpuq_reply COMPGEN-ARGS...: set COMPREPLY to compgen's words, one per
# line, so file names with spaces stay whole.
_gpuq_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# _gpuq_options SUBCOMMAND: print the options SUBCOMMAND takes.
_gpuq_options()
{
	case $1 in
	submit)		echo '--name --priority --hold -q --help' ;;
	status)		echo '--all --state --user --json --limit --help' ;;
	show)		echo '--json --help' ;;
	cancel|hold|release|ping|help) echo '--help' ;;
	plan)		echo '--json --help' ;;
	quotas)		echo '--region --gpu --json --help' ;;
	prices)		echo '--gpu --region --json --help' ;;
	'')		echo '--socket --version --help' ;;
	esac
}

# _gpuq_ids PROG SUBCOMMAND SOCKET: print the ids of jobs SUBCOMMAND can
# act on, one per line, asking the daemon; nothing if it cannot answer.
_gpuq_ids()
{
	local prog=$1 sub=$2 sock=$3 out
	local -a args=()

	[[ -n $sock ]] && args+=(--socket "$sock")
	args+=(status --json --limit 1000)
	# show reads any job; the others act only on live ones.
	[[ $sub == show ]] && args+=(--all)
	if type -P timeout >/dev/null; then
		out=$(timeout 2 "$prog" "${args[@]}" 2>/dev/null </dev/null)
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
	case $1 in
	--socket)
		compopt -o filenames 2>/dev/null
		_gpuq_reply -f -- "$2"
		;;
	--state)
		_gpuq_reply -W "$_gpuq_states all" -- "$2"
		;;
	--gpu)
		_gpuq_reply -W "$_gpuq_gpus" -- "$2"
		;;
	--user)
		_gpuq_reply -u -- "$2"
		;;
	--name|--priority|--limit|--region)
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
	local sub='' sock=${GPUQ_SOCKET-} prog=${COMP_WORDS[0]} w i
	local -a seen=()

	COMPREPLY=()
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}

	# Which option is the word under the cursor the value of? bash splits
	# --state=queued into "--state" "=" "queued" when '=' is a word break.
	if [[ $cur == = ]]; then
		opt=$prev
		cur=
	elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		prefix=$opt=
		cur=${cur#*=}
	else
		opt=$prev
	fi

	# The subcommand, the socket and the ids already typed, from the words
	# before the cursor.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--socket)
			if [[ ${COMP_WORDS[i + 1]} == = ]]; then
				((i++))
			fi
			((i + 1 < COMP_CWORD)) && sock=${COMP_WORDS[i + 1]}
			((i++))
			;;
		--socket=*)
			sock=${w#--socket=}
			;;
		--name|--priority|--state|--user|--limit|--region|--gpu)
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			((i++))
			;;
		-*|=)
			;;
		*)
			if [[ -z $sub ]]; then
				sub=$w
			else
				seen+=("$w")
			fi
			;;
		esac
	done
	sock=${sock/#\~/$HOME}
	prog=${prog/#\~/$HOME}

	if _gpuq_value "$opt" "$cur"; then
		if [[ -n $prefix ]]; then
			COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
		fi
		return 0
	fi

	if [[ $cur == -* ]]; then
		_gpuq_reply -W "$(_gpuq_options "$sub")" -- "$cur"
		return 0
	fi

	case $sub in
	'')
		_gpuq_reply -W "$_gpuq_subcommands" -- "$cur"
		;;
	help)
		((${#seen[@]} == 0)) &&
		    _gpuq_reply -W "$_gpuq_subcommands" -- "$cur"
		;;
	submit|plan)
		((${#seen[@]} == 0)) && _gpuq_files "$cur"
		;;
	show|cancel|hold|release)
		# show takes one id; the others any number, each once.
		[[ $sub == show ]] && ((${#seen[@]} > 0)) && return 0
		if [[ $prog != */* ]]; then
			prog=$(type -P "$prog") || return 0
		fi
		[[ -x $prog ]] || return 0
		local ids=() id s dup
		while IFS= read -r id; do
			dup=
			for s in "${seen[@]}"; do
				[[ $s == "$id" ]] && dup=1
			done
			[[ -z $dup && $id == "$cur"* ]] && ids+=("$id")
		done < <(_gpuq_ids "$prog" "$sub" "$sock")
		COMPREPLY=("${ids[@]}")
		;;
	esac
	return 0
}

complete -F _gpuq gpuq
