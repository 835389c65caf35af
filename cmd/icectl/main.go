// Command icectl inspects and maintains Apache Iceberg tables.
package main

import (
	"os"

	"github.com/icectl/icectl/internal/cli"
)

func main() { os.Exit(cli.Main()) }
