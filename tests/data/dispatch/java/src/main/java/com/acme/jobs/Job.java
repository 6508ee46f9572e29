package com.acme.jobs;

public abstract class Job {
    public void run() {
        execute();
    }

    protected abstract void execute();
}
