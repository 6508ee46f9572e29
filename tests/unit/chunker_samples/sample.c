#include <stdlib.h>
#include <string.h>

#define BUF_MIN 16

struct buffer {
    char *data;
    size_t len;
    size_t cap;
};

/* Grows the buffer to hold at least `need` bytes. */
static int buffer_reserve(struct buffer *b, size_t need)
{
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap * 2 : BUF_MIN;
    char *data = realloc(b->data, cap);
    if (!data)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

int buffer_append(struct buffer *b, const char *s, size_t n)
{
    if (buffer_reserve(b, b->len + n) != 0)
        return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

typedef struct {
    size_t used;
    size_t total;
} buffer_stats;

typedef struct {
    int fd;
} *buffer_handle;
