/*
 * webhook.h: what a notification URL may be (gpuqd.conf(5) [notify],
 * gpuq-job(5) notify). Pure: shared by gpuqd.conf's check and the job
 * spec's, so both refuse the same URLs with the same words.
 */
#ifndef GPUQ_WEBHOOK_H
#define GPUQ_WEBHOOK_H

/*
 * 0 if URL may receive notifications: https:// to any host, or http://
 * only to this machine (localhost, 127.0.0.0/8, [::1]), since a plain
 * http POST would carry job names and messages in the clear. Else
 * -EINVAL and *CAUSE (new) names the problem and the fix, not
 * the URL (the caller names it: it may hold a secret path).
 */
int	webhook_url_check(const char *url, char **cause);

#endif
