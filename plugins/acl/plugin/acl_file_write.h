/* acl_file_write.h — atomic replacement of a file holding secrets. */
#ifndef ACL_FILE_WRITE_H
#define ACL_FILE_WRITE_H

#include <stddef.h>

int acl_write_file_0600(const char *path, const char *data, size_t len, char *err, size_t errlen);

#endif
