/// Returns the number of libvips prototypes checked (the check itself happens at compile time).
int dr_vips_api_checked(void);
