/*
 * pypkg.c: a python_package job as a command line, for the services
 * that run a container rather than a package (Cloud Batch, Compute
 * Engine). Vertex AI takes the package as it is (pythonPackageSpec).
 *
 * The executor image runs /bin/sh with the constant script of
 * pypkg-run.sh and the user's strings as arguments after it, so no
 * user string is ever part of a shell's program (doc/DESIGN.md "Python
 * packages").
 */
#include "config.h"

#include <jansson.h>

#include "common/log.h"

#include "providers/provider.h"
#include "providers/prov-impl.h"

void
prov_pypkg_argv(const struct prov_launch *l, json_t **ret_command,
    json_t **ret_args)
{
	json_t	*pp = l->python_package, *cmd, *args, *uris, *v;
	size_t	 i;

	uris = json_object_get(pp, "package_uris");
	cmd = prov_checked(json_pack("[s, s, s, s]", "/bin/sh", "-c",
	    prov_pypkg_script, "gpuq-python-package"));
	args = prov_checked(json_pack("[O, o]", json_object_get(pp, "module"),
	    prov_checked(json_sprintf("%zu", json_array_size(uris)))));
	json_array_foreach(uris, i, v)
		if (json_array_append(args, v) != 0)
			fatalx("pypkg: out of memory");
	json_array_foreach(json_object_get(pp, "args"), i, v)
		if (json_array_append(args, v) != 0)
			fatalx("pypkg: out of memory");
	*ret_command = cmd;
	*ret_args = args;
}
