/*
 * test-frame.c: common/frame.c as gpuqd's server uses it: lines split
 * across reads, CRLF, over-long lines skipped in step with the stream,
 * and the UTF-8 check that runs before JSON parsing.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/frame.h"
#include "common/proto.h"

/* Next line as a string, or NULL when more bytes are needed. */
static const char *
next_line(struct frame *f)
{
	char	*line;
	size_t	 len;
	int	 rc;

	rc = frame_next(f, &line, &len);
	assert_true(rc == 0 || rc == 1);
	if (rc == 0)
		return NULL;
	assert_int_equal(strlen(line), len);
	return line;
}

static void
feed_str(struct frame *f, const char *s)
{
	frame_feed(f, s, strlen(s));
}

static void
test_frame_lines(void **state)
{
	struct frame	f;

	frame_init(&f, 64);
	feed_str(&f, "{\"op\":\"ping\"}\n{\"op\":\"list\"}\n");
	assert_string_equal(next_line(&f), "{\"op\":\"ping\"}");
	assert_string_equal(next_line(&f), "{\"op\":\"list\"}");
	assert_null(next_line(&f));
	assert_int_equal(frame_pending(&f), 0);
	frame_done(&f);
}

static void
test_frame_split_reads(void **state)
{
	const char	*msg = "abc\ndefgh\n";
	struct frame	 f;
	size_t		 i;
	int		 got = 0;
	const char	*l;

	frame_init(&f, 64);
	for (i = 0; msg[i] != '\0'; i++) {
		frame_feed(&f, msg + i, 1);
		while ((l = next_line(&f)) != NULL) {
			assert_string_equal(l, got == 0 ? "abc" : "defgh");
			got++;
		}
	}
	assert_int_equal(got, 2);
	frame_done(&f);
}

static void
test_frame_partial_pending(void **state)
{
	struct frame	f;

	frame_init(&f, 64);
	feed_str(&f, "one\ntw");
	assert_string_equal(next_line(&f), "one");
	assert_null(next_line(&f));
	assert_int_equal(frame_pending(&f), 2);
	feed_str(&f, "o\n");
	assert_string_equal(next_line(&f), "two");
	assert_int_equal(frame_pending(&f), 0);
	frame_done(&f);
}

static void
test_frame_crlf(void **state)
{
	struct frame	f;
	char		*line;
	size_t		 len;

	frame_init(&f, 64);
	feed_str(&f, "abc\r\n\r\nx\ry\n");
	assert_int_equal(frame_next(&f, &line, &len), 1);
	assert_int_equal(len, 3);
	assert_string_equal(line, "abc");
	assert_int_equal(frame_next(&f, &line, &len), 1);
	assert_int_equal(len, 0);
	/* A lone CR inside a line is data. */
	assert_int_equal(frame_next(&f, &line, &len), 1);
	assert_string_equal(line, "x\ry");
	frame_done(&f);
}

static void
test_frame_empty_lines(void **state)
{
	struct frame	f;

	frame_init(&f, 64);
	feed_str(&f, "\n\nz\n");
	assert_string_equal(next_line(&f), "");
	assert_string_equal(next_line(&f), "");
	assert_string_equal(next_line(&f), "z");
	frame_done(&f);
}

static void
test_frame_exact_max(void **state)
{
	struct frame	f;
	char		buf[18];

	frame_init(&f, 16);
	memset(buf, 'a', 16);
	buf[16] = '\n';
	frame_feed(&f, buf, 17);
	buf[16] = '\0';
	assert_string_equal(next_line(&f), buf);
	frame_done(&f);
}

/* The whole over-long line is in one read, newline included. */
static void
test_frame_too_long_whole(void **state)
{
	struct frame	f;
	char		buf[64], *line;
	size_t		len;

	frame_init(&f, 16);
	memset(buf, 'a', 17);
	buf[17] = '\n';
	frame_feed(&f, buf, 18);
	feed_str(&f, "ok\n");
	assert_int_equal(frame_next(&f, &line, &len), -EMSGSIZE);
	assert_string_equal(next_line(&f), "ok");
	assert_null(next_line(&f));
	frame_done(&f);
}

/* Reported as soon as it is too long, once, and skipped to its end. */
static void
test_frame_too_long_streamed(void **state)
{
	struct frame	f;
	char		buf[10], *line;
	size_t		len;
	int		i;

	frame_init(&f, 16);
	memset(buf, 'b', sizeof buf);
	frame_feed(&f, buf, sizeof buf);
	assert_int_equal(frame_next(&f, &line, &len), 0);
	frame_feed(&f, buf, sizeof buf);
	assert_int_equal(frame_next(&f, &line, &len), -EMSGSIZE);
	for (i = 0; i < 100; i++) {
		frame_feed(&f, buf, sizeof buf);
		assert_int_equal(frame_next(&f, &line, &len), 0);
		assert_int_equal(frame_pending(&f), 0);	/* not kept */
	}
	feed_str(&f, "bbb\r\n{\"op\":\"ping\"}\r\n");
	assert_string_equal(next_line(&f), "{\"op\":\"ping\"}");
	frame_done(&f);
}

/* The server's case: GPUQ_MAX_LINE + 1 in 64 KiB reads, then a request. */
static void
test_frame_too_long_real_limit(void **state)
{
	struct frame	 f;
	size_t		 chunk = 65536, sent = 0, n;
	char		*buf, *line;
	size_t		 len;
	int		 rc, errors = 0;

	buf = malloc(chunk);
	assert_non_null(buf);
	memset(buf, 'x', chunk);
	frame_init(&f, GPUQ_MAX_LINE);
	while (sent < (size_t)GPUQ_MAX_LINE + 1) {
		n = chunk;
		if (n > (size_t)GPUQ_MAX_LINE + 1 - sent)
			n = (size_t)GPUQ_MAX_LINE + 1 - sent;
		frame_feed(&f, buf, n);
		sent += n;
		while ((rc = frame_next(&f, &line, &len)) != 0) {
			assert_int_equal(rc, -EMSGSIZE);
			errors++;
		}
	}
	feed_str(&f, "\n{\"op\":\"ping\"}\n");
	while ((rc = frame_next(&f, &line, &len)) == -EMSGSIZE)
		errors++;
	assert_int_equal(errors, 1);
	assert_int_equal(rc, 1);
	assert_string_equal(line, "{\"op\":\"ping\"}");
	assert_true(f.cap <= 2 * (size_t)GPUQ_MAX_LINE + chunk);
	frame_done(&f);
	free(buf);
}

/* Many short lines: the buffer does not grow with the stream. */
static void
test_frame_buffer_bounded(void **state)
{
	struct frame	f;
	int		i;

	frame_init(&f, 1024);
	for (i = 0; i < 100000; i++) {
		feed_str(&f, "{\"op\":\"ping\"}\n");
		assert_string_equal(next_line(&f), "{\"op\":\"ping\"}");
	}
	assert_true(f.cap <= 4096);
	frame_done(&f);
}

static void
test_frame_utf8_valid(void **state)
{
	static const char	*good[] = {
		"",
		"plain ascii {\"op\":\"ping\"}",
		"caf\xc3\xa9",				/* U+00E9 */
		"\xe2\x82\xac",				/* U+20AC */
		"\xef\xbf\xbf",				/* U+FFFF */
		"\xf0\x9f\x98\x80",			/* U+1F600 */
		"\xf4\x8f\xbf\xbf",			/* U+10FFFF */
	};
	size_t			 i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++)
		assert_true(utf8_valid(good[i], strlen(good[i])));
	/* NUL is valid UTF-8; JSON parsing deals with it. */
	assert_true(utf8_valid("a\0b", 3));
}

static void
test_frame_utf8_invalid(void **state)
{
	static const char	*bad[] = {
		"\xff",				/* never in UTF-8 */
		"\x80",				/* lone continuation */
		"\xc3",				/* truncated */
		"\xc3(",			/* bad continuation */
		"\xe2\x82",			/* truncated 3-byte */
		"\xc0\x80",			/* overlong NUL */
		"\xc1\xbf",			/* overlong */
		"\xe0\x80\x80",			/* overlong 3-byte */
		"\xf0\x80\x80\x80",		/* overlong 4-byte */
		"\xed\xa0\x80",			/* surrogate U+D800 */
		"\xed\xbf\xbf",			/* surrogate U+DFFF */
		"\xf4\x90\x80\x80",		/* above U+10FFFF */
		"\xf8\x88\x80\x80\x80",		/* 5-byte form */
		"ok\xfe",			/* bad byte at the end */
	};
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(utf8_valid(bad[i], strlen(bad[i])));
}

int
main(void)
{
	const struct CMUnitTest	tests[] = {
		cmocka_unit_test(test_frame_lines),
		cmocka_unit_test(test_frame_split_reads),
		cmocka_unit_test(test_frame_partial_pending),
		cmocka_unit_test(test_frame_crlf),
		cmocka_unit_test(test_frame_empty_lines),
		cmocka_unit_test(test_frame_exact_max),
		cmocka_unit_test(test_frame_too_long_whole),
		cmocka_unit_test(test_frame_too_long_streamed),
		cmocka_unit_test(test_frame_too_long_real_limit),
		cmocka_unit_test(test_frame_buffer_bounded),
		cmocka_unit_test(test_frame_utf8_valid),
		cmocka_unit_test(test_frame_utf8_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
