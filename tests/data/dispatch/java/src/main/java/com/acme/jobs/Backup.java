package com.acme.jobs;

public class Backup extends Job {
    protected void execute() {
        copy();
    }
}
