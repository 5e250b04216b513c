/* Three versions of one function (.symver): two old ones kept for old binaries, the default one for new links. */
int compat_v1(int x) { return x + 1; }
int compat_v2(int x) { return x + 2; }
int current_v3(int x) { return x + 3; }
__asm__(".symver compat_v1, api@VERS_1");
__asm__(".symver compat_v2, api@VERS_2");
__asm__(".symver current_v3, api@@VERS_3");


