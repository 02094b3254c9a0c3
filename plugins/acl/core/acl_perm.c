/* acl_perm.c — owns the permission bits, their parsing and the code tables
 * (admin-only broker codes, read-only NameServer codes). */
#include <string.h>

#include "acl_perm.h"

uint8_t acl_perm_parse(const char *text)
{
    if (!text)
        return ACL_PERM_DENY;
    while (*text == ' ' || *text == '\t')
        text++;
    size_t n = strlen(text);
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    if (n == 3 && strncmp(text, "PUB", 3) == 0)
        return ACL_PERM_PUB;
    if (n == 3 && strncmp(text, "SUB", 3) == 0)
        return ACL_PERM_SUB;
    if (n == 7 && (strncmp(text, "PUB|SUB", 7) == 0 || strncmp(text, "SUB|PUB", 7) == 0))
        return ACL_PERM_PUB | ACL_PERM_SUB;
    return ACL_PERM_DENY;
}

bool acl_perm_allows(uint8_t needed, uint8_t owned)
{
    if (owned & ACL_PERM_DENY)
        return false;
    if (needed & ACL_PERM_ANY)
        return (owned & (ACL_PERM_PUB | ACL_PERM_SUB)) != 0;
    return (needed & owned) != 0;
}

bool acl_is_acl_admin_code(int32_t code)
{
    return code >= 50 && code <= 54;
}

bool acl_broker_code_needs_admin(int32_t code)
{
    switch (code) {
    case 17:  /* UPDATE_AND_CREATE_TOPIC */
    case 25:  /* UPDATE_BROKER_CONFIG */
    case 200: /* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP */
    case 207: /* DELETE_SUBSCRIPTIONGROUP */
    case 215: /* DELETE_TOPIC_IN_BROKER */ return true;
    default: return acl_is_acl_admin_code(code);
    }
}

bool acl_namesrv_code_is_read(int32_t code)
{
    switch (code) {
    case 101: /* GET_KV_CONFIG */
    case 105: /* GET_ROUTEINFO_BY_TOPIC */
    case 106: /* GET_BROKER_CLUSTER_INFO */
    case 206: /* GET_ALL_TOPIC_LIST_FROM_NAMESERVER */
    case 219: /* GET_KVLIST_BY_NAMESPACE */
    case 224: /* GET_TOPICS_BY_CLUSTER */
    case 304: /* GET_SYSTEM_TOPIC_LIST_FROM_NS */
    case 311: /* GET_UNIT_TOPIC_LIST */
    case 312: /* GET_HAS_UNIT_SUB_TOPIC_LIST */
    case 313: /* GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST */
    case 319: /* GET_NAMESRV_CONFIG */
    case 322: /* QUERY_DATA_VERSION */
    case 901: /* GET_BROKER_MEMBER_GROUP */ return true;
    default: return false;
    }
}

bool acl_is_retry_topic(const char *name)
{
    return name && strncmp(name, ACL_RETRY_PREFIX, sizeof(ACL_RETRY_PREFIX) - 1) == 0;
}
