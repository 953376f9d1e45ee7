/* main.c - start-up and shutdown order (placeholder until the loop lands)
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "mnemod: server not assembled yet\n");
    return 1;
}
