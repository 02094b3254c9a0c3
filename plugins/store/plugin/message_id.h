/* message_id.h — offsetMsgId (protocol-messages.md §10.4.1) and socket
 * addresses as the store records them (BORNHOST, STOREHOST). */
#ifndef STORE_MESSAGE_ID_H
#define STORE_MESSAGE_ID_H

#include <stddef.h>
#include <stdint.h>

#include "store_engine.h"

/* "ip:port", "[v6]:port" or "v6:port" → address (::ffff:a.b.c.d becomes
 * IPv4). 0 or -1. */
int addr_parse(const char *text, store_addr *out);
/* ip text + port → address. 0 or -1. */
int addr_from_ip_port(const char *ip, int32_t port, store_addr *out);

/* Upper-case hex of address, port, offset: 32 (IPv4) or 56 characters plus
 * NUL; buf must hold 57 bytes. Returns the length. */
size_t offset_msg_id(const store_addr *store_host, int64_t phys_offset, char *buf);

#endif
