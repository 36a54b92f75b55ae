/* main.c - placeholder entry point until the CLI lands (same session). */
#include <stdio.h>
int main(void) { puts("topsim"); return 0; }
