return 3.5
