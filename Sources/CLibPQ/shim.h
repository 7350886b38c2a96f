// libpq, PostgreSQL's C client (issue 26), from the system (libpq-dev).
#include <libpq-fe.h>
