/* frame_file.c — owns reading a recorded frame file into memory whole (the
 * frames are small: one request or response each). Decoding is the
 * caller's, with rmq_cmd_decode. */
#include "frame_file.h"

#include <stdio.h>
#include <stdlib.h>

unsigned char *rmq_frame_file_read(const char *path, size_t *len)
{
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    if (buf)
        *len = (size_t)n;
    return buf;
}
