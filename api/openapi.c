/* openapi.c - GET /openapi.json: the OpenAPI 3.1 description of this API
 * SPDX-License-Identifier: MIT
 *
 * api/openapi.json is the one description of the API (docs and MCP tool schemas are checked
 * against it); mk/openapi.mk compiles it into the binary, so the document served is always
 * the one this binary was built with.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

void mem_api__openapi(mem_api_resp_t *resp)
{
    char *body = malloc(mem_api__openapi_json_len + 1);
    if (!body) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    memcpy(body, mem_api__openapi_json, mem_api__openapi_json_len + 1);
    free(resp->body);
    resp->body = body;
    resp->body_len = mem_api__openapi_json_len;
    resp->status = 200;
    resp->content_type = "application/json";
}
