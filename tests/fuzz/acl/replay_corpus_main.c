/* replay_corpus_main.c — runs every file of the seed corpus through the
 * fuzz harness so a plain ctest (no libFuzzer, gcc or clang) exercises it;
 * under ASan this catches crashes and leaks on the seeds. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    size_t files = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], de->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        uint8_t *buf = malloc(1 << 20);
        size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
        fclose(f);
        if (buf)
            LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        files++;
    }
    closedir(d);
    printf("replayed %zu corpus files\n", files);
    return files > 0 ? 0 : 1;
}
