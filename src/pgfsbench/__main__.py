from pgfsbench.cli import main

main()
