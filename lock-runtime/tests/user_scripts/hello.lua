-- No keys: returns a constant.
return 'hello'
