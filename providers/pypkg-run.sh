# pypkg-run.sh: runs a Python-package job (gpuq-job(5) python_package)
# on Cloud Batch and Compute Engine the way Vertex AI's executor images
# run a pythonPackageSpec: each package file is copied from Cloud
# Storage and pip-installed, in order, then `python -m MODULE ARGS...`
# runs in place of this shell.
#
# Called as
#   sh -c "$THIS" gpuq-python-package MODULE COUNT URI... ARG...
# with COUNT package URIs followed by the module's arguments. Every
# user string arrives as an argument and is only ever expanded inside
# double quotes; none is part of this text, which is a constant
# (providers/pypkg.c; doc/DESIGN.md "Python packages").
set -eu
module=$1
count=$2
shift 2
case $count in
'' | *[!0-9]*)
	echo "gpuq: python_package: bad package count" >&2
	exit 2
	;;
esac
py=python3
command -v python3 >/dev/null 2>&1 || py=python
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuq-pkg.XXXXXX")
i=0
while [ "$i" -lt "$count" ]; do
	uri=$1
	shift
	i=$((i + 1))
	case $uri in
	gs://*/?*) ;;
	*)
		echo "gpuq: python_package: not a gs:// file: $uri" >&2
		exit 2
		;;
	esac
	# Its own directory keeps the file's name, which pip reads a
	# wheel's tags from.
	mkdir "$dir/$i"
	file=$dir/$i/${uri##*/}
	if command -v gcloud >/dev/null 2>&1; then
		gcloud storage cp "$uri" "$file"
	elif command -v gsutil >/dev/null 2>&1; then
		gsutil cp "$uri" "$file"
	else
		"$py" -c 'import sys
from google.cloud import storage
b, _, o = sys.argv[1][5:].partition("/")
storage.Client().bucket(b).blob(o).download_to_filename(sys.argv[2])' \
		    "$uri" "$file"
	fi
	"$py" -m pip install --quiet --no-warn-script-location "$file"
done
exec "$py" -m "$module" "$@"
