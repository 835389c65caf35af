package cli

// whereUsage is the help text of every --where flag, so that the verbs
// describe the selection the same way.
const whereUsage = "rewrite only files that may hold matching rows, by partition and column bounds (any column; " +
	"whole files are rewritten, as Spark's where), e.g. \"order_ts >= '2024-06-06' and region = 'eu'\""
