/* native.c: any native program; build.sh compiles it for the build machine. */
int main(void) { return 0; }
