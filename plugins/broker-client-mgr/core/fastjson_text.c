/* fastjson_text.c — owns the text rewrite that lets jansson read files and
 * bodies written by Java's fastjson, and the parse of such a document into
 * its top-level object. Never interprets values; only keys in object
 * position are touched, never the inside of strings. */
#include "fastjson_text.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *fastjson_quote_bare_keys(const char *text, size_t len)
{
    /* Worst case every key of one digit gains two quotes: 3x is enough. */
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    bool in_str = false;
    bool key_pos = false; /* just after '{' or ',' inside an object */
    int depth_obj[256];
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            out[o++] = c;
            if (c == '\\' && i + 1 < len)
                out[o++] = text[++i];
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (key_pos && (c == '-' || isdigit((unsigned char)c))) {
            size_t j = i + 1;
            while (j < len && isdigit((unsigned char)text[j]))
                j++;
            size_t k = j;
            while (k < len && isspace((unsigned char)text[k]))
                k++;
            if (k < len && text[k] == ':') {
                out[o++] = '"';
                memcpy(out + o, text + i, j - i);
                o += j - i;
                out[o++] = '"';
                i = j - 1;
                key_pos = false;
                continue;
            }
        }
        if (!isspace((unsigned char)c))
            key_pos = false;
        switch (c) {
        case '"': in_str = true; break;
        case '{':
            if (depth < 256)
                depth_obj[depth] = 1;
            depth++;
            key_pos = true;
            break;
        case '[':
            if (depth < 256)
                depth_obj[depth] = 0;
            depth++;
            break;
        case '}':
        case ']':
            if (depth > 0)
                depth--;
            break;
        case ',': key_pos = depth > 0 && depth <= 256 && depth_obj[depth - 1] == 1; break;
        default: break;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

json_t *fastjson_load_object(const char *text, size_t len, char *err, size_t errlen)
{
    char *q = fastjson_quote_bare_keys(text, len);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loads(q, 0, &je);
    free(q);
    if (!json_is_object(root)) {
        snprintf(err, errlen, "line %d: %s", je.line, je.text);
        json_decref(root);
        return NULL;
    }
    return root;
}
