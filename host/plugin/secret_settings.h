/* secret_settings.h — which plugin settings hold secrets (their values are
 * never shown by `rmqhostctl config`, `--list-settings` or logs). */
#ifndef RMQHOST_SECRET_SETTINGS_H
#define RMQHOST_SECRET_SETTINGS_H

#include <stdbool.h>

/* The value shown in place of a secret. */
#define SECRET_SETTING_MASK "******"

/* True for names that contain, ignoring case, "secret", "password" or
 * "passwd" (secretKey, key_password, ...). */
bool setting_name_is_secret(const char *name);

#endif
