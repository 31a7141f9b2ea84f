/*
 * provtest.c: helpers for the provider builder and mapper unit tests
 * (see provtest.h).
 */
#include "config.h"

#include <sys/wait.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/gpu.h"
#include "providers/provider.h"
#include "tests/unit/provtest.h"

struct provtest *
provtest_new(json_t *command, json_t *args, json_t *env)
{
	struct provtest	*f = calloc(1, sizeof *f);

	assert_non_null(f);
	f->command = command;
	f->args = args;
	f->env = env;
	f->labels = json_pack("{s:s}", "team", "vision");
	f->l.install = "i1";
	f->l.job_id = 42;
	f->l.attempt = 2;
	f->l.resource = "gpuq-i1-42-2";
	f->l.request_id = "0b6ce5a2-3c57-5b4e-8f1e-6a7d2b1c9e00";
	f->l.region = "us-central1";
	f->l.gpu = gpu_lookup("nvidia-tesla-t4");
	f->l.spot = 1;
	f->l.image = "us-docker.pkg.dev/p/r/train:1";
	f->l.command = f->command;
	f->l.args = f->args;
	f->l.env = f->env;
	f->l.output_dir = "gs://b/runs/42/";
	f->l.labels = f->labels;
	return f;
}

int
provtest_teardown(void **state)
{
	struct provtest	*f = *state;

	json_decref(f->command);
	json_decref(f->args);
	json_decref(f->env);
	json_decref(f->labels);
	free(f);
	return 0;
}

json_t *
provtest_at(json_t *j, const char *path)
{
	char	*copy = strdup(path), *p, *save = NULL;
	char	*end;
	long	 i;

	for (p = strtok_r(copy, ".", &save); p != NULL && j != NULL;
	    p = strtok_r(NULL, ".", &save)) {
		i = strtol(p, &end, 10);
		j = *end == '\0' ? json_array_get(j, (size_t)i) :
		    json_object_get(j, p);
	}
	free(copy);
	return j;
}

const char *
provtest_str(json_t *j, const char *path)
{
	return json_string_value(provtest_at(j, path));
}

json_t *
provtest_json(const char *text)
{
	json_error_t	 err;
	json_t		*j;

	j = json_loads(text, 0, &err);
	if (j == NULL)
		fail_msg("bad test JSON: %s", err.text);
	return j;
}

int
provtest_run(json_t *argv, char *const *envp, char **ret_out)
{
	char	**av, buf[4096];
	size_t	  i, n = json_array_size(argv), len = 0;
	ssize_t	  r;
	pid_t	  pid;
	int	  fd[2], status;

	av = calloc(n + 1, sizeof *av);
	assert_non_null(av);
	for (i = 0; i < n; i++)
		av[i] = (char *)json_string_value(json_array_get(argv, i));
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)dup2(fd[1], 1);
		(void)close(fd[0]);
		(void)close(fd[1]);
		execve(av[0], av, envp);
		_exit(127);
	}
	(void)close(fd[1]);
	while (len + 1 < sizeof buf &&
	    (r = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	(void)close(fd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	free(av);
	*ret_out = strdup(buf);
	assert_non_null(*ret_out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
